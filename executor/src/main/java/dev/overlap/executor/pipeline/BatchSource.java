package dev.overlap.executor.pipeline;

/**
 * Where a task's input comes from: each call fills one batch into a staging buffer. The seam
 * between Spark's input and the pipeline: Spark rows ({@code RowSource}) and Spark columnar batches
 * ({@code ColumnarSource}) are packed into cuDF's column layout on the task's thread; a source may
 * as well hand the device bytes it decodes itself (compressed file chunks), with stages that take
 * its batch type.
 *
 * @param <S> the staging buffer a batch is filled into
 * @param <H> the filled batch
 */
public interface BatchSource<S, H extends AutoCloseable> {

  /**
   * Fills the next batch into {@code staging}. The returned batch owns {@code staging} and runs
   * {@code release} when it is done with it (on close, or once its copies are over); a batch with
   * no rows means the input had none left. When this method throws, {@code release} has run.
   */
  H fill(S staging, Runnable release);

  /** Whether input remains after the last {@link #fill}. */
  boolean more();

  /** Rows read from the input so far. */
  long rowsRead();

  /**
   * Whether {@link #fill} packs on the host, the time it takes reported as host packing; false for
   * a source whose fill waits for device batches another plugin makes on the task's thread (the
   * RAPIDS Accelerator's operators), its time reported as that plugin's.
   */
  default boolean packsOnHost() {
    return true;
  }
}
