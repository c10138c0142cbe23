package dev.overlap.executor.task;

import dev.overlap.executor.input.parquet.DecodeFailed;
import java.util.Iterator;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A Parquet partition's results from the GPU's decode, read on the host instead when cuDF cannot
 * decode one of its files ({@link DecodeFailed}). Before the partition has given any result, the
 * host path takes the whole partition over in the same task. After, the file is remembered (every
 * later task on this executor reads it on the host) and the task fails saying so: results already
 * handed on cannot be taken back. Spark's retry, on any executor, reads on the host ({@link
 * ParquetPlanOrHost}).
 *
 * <p>Anything else, a fatal CUDA error and the GPU's fence included, is thrown as it is.
 */
final class DecodeFallback<T> extends SwitchOnFailure<T> {
  private final Supplier<Iterator<T>> host;
  private final Consumer<DecodeFailed> onFallback;

  /**
   * @param host the partition through the host's decode, made only when needed
   * @param onFallback told of each file the GPU could not decode, before the host takes over or the
   *     task fails
   */
  DecodeFallback(Iterator<T> gpu, Supplier<Iterator<T>> host, Consumer<DecodeFailed> onFallback) {
    super(gpu);
    this.host = host;
    this.onFallback = onFallback;
  }

  /** The host path for a decode failure before any result; else throws. */
  @Override
  Iterator<T> switchFor(RuntimeException e, boolean given) {
    DecodeFailed d = DecodeFailed.in(e);
    if (d == null) {
      throw e;
    }
    onFallback.accept(d);
    if (given) {
      throw new IllegalStateException(
          d.getMessage()
              + " after this task had handed on results; Spark's retry of the task reads the file"
              + " on the host",
          e);
    }
    return host.get();
  }
}
