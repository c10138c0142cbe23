package dev.overlap.executor.config;

/** What the entry point does when no GPU is usable on an executor. */
public enum NoGpuMode {
  /** Run the kernel's CPU implementation; fail the task if it has none. */
  CPU,
  /** Fail the task, even when the kernel has a CPU implementation. */
  FAIL
}
