package dev.overlap.executor.config;

/** How a Parquet scan under a kernel reaches the GPU. */
public enum ParquetDecodeMode {
  /**
   * The GPU decodes the file's compressed column chunks where it can read the file exactly as Spark
   * would; a task with a file it cannot falls back to the host path, with the reason.
   */
  AUTO,
  /** Spark decodes on the host and the values are packed and copied, as for any input. */
  HOST,
  /** As AUTO, but a file the GPU path cannot read fails its task with the reason. */
  GPU
}
