package dev.overlap.executor.pipeline;

import java.util.concurrent.TimeUnit;

/**
 * How many of one lane's batches (and parts of split ones) are in the pipeline: submitted and not
 * yet out (delivered, failed or dropped, with what they held closed). The pipeline's metrics count
 * the same for every lane.
 */
final class InPipeline {
  private final PipelineMetrics all;
  private int count;

  InPipeline(PipelineMetrics all) {
    this.all = all;
  }

  synchronized void add(int n) {
    count += n;
    all.entered(n);
  }

  synchronized void left() {
    all.left();
    if (--count == 0) {
      notifyAll();
    }
  }

  /**
   * Waits until none is in the pipeline.
   *
   * @return false when {@code millis} passed first
   */
  synchronized boolean await(long millis) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    while (count > 0) {
      long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      if (left <= 0) {
        return false;
      }
      wait(left);
    }
    return true;
  }

  /** As {@link #await}; an interrupt does not end the wait, and is set again on return. */
  boolean awaitThroughInterrupt(long millis) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    boolean interrupted = Thread.interrupted();
    try {
      while (true) {
        try {
          return await(Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
