package dev.overlap.executor.config;

/**
 * What an executor does once a fatal CUDA error has left its GPU unusable: {@link
 * GpuKeys#ON_FATAL_ERROR}. Either way the GPU is fenced first.
 */
public enum OnFatalError {
  /** Exit on the task failure that follows, so that Spark starts a new executor. */
  EXIT,
  /** Stay, and run later tasks as an executor without a GPU does ({@code noGpu.mode} applies). */
  CPU
}
