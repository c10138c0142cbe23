package dev.overlap.executor.api;

/** How the input of a task on the GPU path reached the device. */
@Public
public enum InputPath {
  /** Spark rows, packed into cuDF's layout on the task's thread and copied. */
  ROWS("Spark rows packed on the host"),
  /** Spark's columnar batches (a vectorized scan's), packed with bulk copies and copied. */
  COLUMNAR("Spark columnar batches packed on the host"),
  /** Parquet column chunks, copied compressed and decoded on the GPU. */
  PARQUET("Parquet decoded on the GPU"),
  /** The RAPIDS Accelerator's batches, already in device memory: no packing, no copy. */
  RAPIDS("RAPIDS device batches");

  private final String label;

  InputPath(String label) {
    this.label = label;
  }

  /** A few words for a summary line. */
  public String label() {
    return label;
  }
}
