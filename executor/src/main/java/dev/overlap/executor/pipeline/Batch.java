package dev.overlap.executor.pipeline;

import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One batch on its way through the pipeline: its values ({@link BatchFlow}), its place in its lane,
 * its device bytes and the future its task waits on.
 *
 * @param <R> the result the task takes
 */
final class Batch<R extends AutoCloseable> {
  private static final Logger LOG = LoggerFactory.getLogger(Batch.class);

  private final TaskLane<?, R> lane;
  private final long index;
  private final long bytes;
  private final CompletableFuture<R> result = new CompletableFuture<>();
  private final BatchFlow<?, ?, ?, R> flow;
  private boolean released;
  private boolean left;

  Batch(TaskLane<?, R> lane, long index, long bytes, BatchFlow<?, ?, ?, R> flow) {
    this.lane = lane;
    this.index = index;
    this.bytes = bytes;
    this.flow = flow;
  }

  TaskLane<?, R> lane() {
    return lane;
  }

  long index() {
    return index;
  }

  long bytes() {
    return bytes;
  }

  CompletableFuture<R> result() {
    return result;
  }

  /**
   * Runs one stage on the batch's value. The input is closed afterwards, whatever happened.
   *
   * @return false when the stage threw; the batch has then failed its lane and released its bytes
   */
  boolean runStage(Stage stage) {
    Throwable failure = null;
    try {
      flow.run(stage);
    } catch (Throwable t) {
      failure = t;
    } finally {
      flow.closeSpent();
    }
    if (failure == null) {
      return true;
    }
    // Only now, with its input closed, does the batch leave the pipeline.
    lane.failed(this, stage, failure);
    fail(lane.abandonCause());
    return false;
  }

  /** The last stage is done: hand the result to the task, or close it if the task is gone. */
  void deliver() {
    R r = flow.takeResult();
    // The batch's device memory is gone: give its bytes back before the task sees the result, so
    // a task that took all its results never observes its own bytes still in flight.
    releaseBytes(true);
    try {
      if (!lane.accept(this, r)) {
        closeQuietly(r);
      }
    } finally {
      // Only once the result is the task's, or closed, has the batch left the pipeline.
      left();
    }
  }

  /** The batch will not run further: close what it holds and tell the task why. */
  void abandon(Throwable cause) {
    if (flow != null) {
      flow.close();
    }
    fail(cause == null ? lane.abandonCause() : cause);
  }

  private void fail(Throwable cause) {
    result.completeExceptionally(cause);
    releaseBytes(false);
    left();
  }

  private synchronized void releaseBytes(boolean completed) {
    if (!released) {
      released = true;
      lane.pipeline().batchReleased(bytes, completed);
    }
  }

  private synchronized void left() {
    if (!left) {
      left = true;
      lane.released();
    }
  }

  static void closeQuietly(AutoCloseable c) {
    if (c == null) {
      return;
    }
    try {
      c.close();
    } catch (Exception e) {
      LOG.warn("closing {} failed", c.getClass().getSimpleName(), e);
    }
  }
}
