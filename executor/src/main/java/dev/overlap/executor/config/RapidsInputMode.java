package dev.overlap.executor.config;

/** See {@link OverlapConf#RAPIDS_INPUT}. */
public enum RapidsInputMode {
  /**
   * Take the RAPIDS Accelerator's device batches when its plan is on the GPU, except for a plain
   * Parquet scan, which Overlap decodes on the GPU itself.
   */
  AUTO,
  /** Take them whenever its plan is on the GPU, plain Parquet scans included. */
  ALWAYS,
  /** Never take them. */
  OFF
}
