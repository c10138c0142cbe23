package dev.overlap.executor.pipeline;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * Where one batch's result goes, in its lane's order: the result, the failure that ended the batch,
 * or, when the batch was split, the slots of its parts in order, which then take its place.
 *
 * <p>Ownership: a result put here belongs to the slot until the task takes it; {@link #drop} closes
 * it (and those of the parts) when the task ended first.
 */
final class ResultSlot<R extends AutoCloseable> {
  private static final Object SPLIT = new Object();

  private final CompletableFuture<Object> done = new CompletableFuture<>();
  private final long index;
  private volatile List<ResultSlot<R>> parts;

  /**
   * @param index the batch's index in its task, for messages
   */
  ResultSlot(long index) {
    this.index = index;
  }

  long index() {
    return index;
  }

  boolean complete(R result) {
    return done.complete(result);
  }

  boolean fail(Throwable cause) {
    return done.completeExceptionally(cause);
  }

  /** The batch was split: its results are its parts'; false when the slot was already done. */
  boolean split(List<ResultSlot<R>> p) {
    parts = p; // written before the completion that publishes it
    return done.complete(SPLIT);
  }

  /**
   * Waits until the slot is done, checking {@code cancelled} every {@link Waits#POLL_MILLIS} ms.
   *
   * @return the parts when the batch was split, else null (the result is then {@link #take}n)
   * @throws ExecutionException when the batch failed
   * @throws WaitCancelledException when {@code cancelled} turned true (the interrupt flag is left
   *     as it was)
   * @throws InterruptedException when the thread was interrupted
   */
  List<ResultSlot<R>> await(BooleanSupplier cancelled, String task)
      throws InterruptedException, ExecutionException {
    while (true) {
      if (cancelled.getAsBoolean()) {
        throw new WaitCancelledException(
            task + ": cancelled while waiting for the result of batch " + index);
      }
      try {
        return done.get(Waits.POLL_MILLIS, TimeUnit.MILLISECONDS) == SPLIT ? parts : null;
      } catch (TimeoutException e) {
        // check again
      }
    }
  }

  /** The result of a slot that is done, neither failed nor split. */
  @SuppressWarnings("unchecked")
  R take() {
    return (R) done.join();
  }

  /**
   * The task ended: a slot not done fails with {@code ended} (so nothing waits on it any more); a
   * result not taken is closed; a split slot drops its parts.
   */
  void drop(Throwable ended) {
    if (done.completeExceptionally(ended) || done.isCompletedExceptionally()) {
      return;
    }
    Object v = done.join();
    if (v == SPLIT) {
      parts.forEach(p -> p.drop(ended));
    } else {
      Batch.closeQuietly((AutoCloseable) v);
    }
  }
}
