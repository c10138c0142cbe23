package dev.overlap.executor.pipeline;

/** A batch ready for the pipeline, as a task's driver sees it: its size on both sides. */
public interface PackedBatch extends AutoCloseable {
  /** Rows in the batch; 0 when its source had nothing left. */
  int rows();

  /** Bytes the upload copies to the device. */
  long copyBytes();

  /** Bytes the batch occupies on the device, acquired from the pipeline's budget. */
  long deviceBytes();

  /** Frees what the batch holds; throws nothing checked. */
  @Override
  void close();
}
