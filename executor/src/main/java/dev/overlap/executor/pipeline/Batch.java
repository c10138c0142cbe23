package dev.overlap.executor.pipeline;

import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One batch on its way through the pipeline. Its payload is the current stage's input: the host
 * batch, then the device batch, then the device output, then the host result. Exactly one thread
 * touches the payload at a time (the stage thread that holds the batch).
 */
final class Batch {
  private static final Logger LOG = LoggerFactory.getLogger(Batch.class);

  private final TaskLane<?, ?> lane;
  private final long index;
  private final long bytes;
  private final CompletableFuture<Object> result = new CompletableFuture<>();
  private AutoCloseable payload;
  private boolean released;

  Batch(TaskLane<?, ?> lane, long index, long bytes, AutoCloseable host) {
    this.lane = lane;
    this.index = index;
    this.bytes = bytes;
    this.payload = host;
  }

  TaskLane<?, ?> lane() {
    return lane;
  }

  long index() {
    return index;
  }

  CompletableFuture<Object> result() {
    return result;
  }

  /**
   * Runs one stage on the payload. The input is closed afterwards, whatever happened.
   *
   * @return false when the stage threw; the batch has then failed its lane and released its bytes
   */
  boolean runStage(Stage stage) {
    AutoCloseable in = payload;
    payload = null;
    try {
      payload = lane.run(stage, in);
      return true;
    } catch (Throwable t) {
      lane.failed(this, stage, t);
      finish(null, lane.abandonCause());
      return false;
    } finally {
      closeQuietly(in);
    }
  }

  /** The last stage is done: hand the result to the task, or close it if the task is gone. */
  void deliver() {
    AutoCloseable r = payload;
    payload = null;
    // The batch's device memory is gone: give its bytes back before the task sees the result, so
    // a task that took all its results never observes its own bytes still in flight.
    release(true);
    if (!lane.accept(this, r)) {
      closeQuietly(r);
    }
  }

  /** The batch will not run further: close what it holds and tell the task why. */
  void abandon(Throwable cause) {
    closeQuietly(payload);
    payload = null;
    finish(null, cause == null ? lane.abandonCause() : cause);
  }

  private void finish(Object value, Throwable cause) {
    if (cause != null) {
      result.completeExceptionally(cause);
    } else {
      result.complete(value);
    }
    release(false);
  }

  private synchronized void release(boolean completed) {
    if (!released) {
      released = true;
      lane.pipeline().batchReleased(bytes, completed);
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
