package dev.overlap.executor.pipeline;

import java.util.Iterator;

/**
 * A batch's result back on the host, handed to the task. Closing it frees its memory; the rows are
 * valid until then.
 *
 * @param <T> a row
 */
public interface ResultBatch<T> extends AutoCloseable {
  Iterator<T> rows();

  /** Frees the result's memory; throws nothing checked. */
  @Override
  void close();
}
