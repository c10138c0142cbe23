package dev.overlap.executor.gpu;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Spark tasks that use a {@link GpuRuntime}'s memory from their own threads: they pack rows
 * into staging buffers, copy encoded Parquet out of pinned buffers into their files, read result
 * rows from pinned buffers, close cuDF's Parquet writer. Spark stops an executor's plugins without
 * waiting for the tasks still running ({@code Executor.stop} shuts its task pool down and calls the
 * plugins' {@code shutdown} at once), and a failed job's other tasks are killed without an
 * interrupt, running on until they look: the runtime's close waits for them ({@code closeAndAwait})
 * before it frees that memory, or leaves it allocated.
 */
public final class TaskUsers {
  private static final Logger LOG = LoggerFactory.getLogger(TaskUsers.class);

  /** How long {@code closeAndAwait} waits at most. */
  static final Duration GIVE_UP = Duration.ofSeconds(30);

  private final Duration giveUp;
  private int inFlight;
  private boolean closing;

  /**
   * @param giveUp how long {@code closeAndAwait} waits, at most {@code GIVE_UP}
   */
  TaskUsers(Duration giveUp) {
    this.giveUp = giveUp.compareTo(GIVE_UP) < 0 ? giveUp : GIVE_UP;
  }

  /**
   * A task begins to use the runtime. The returned handle says it has ended (it runs once; later
   * runs do nothing).
   *
   * @throws IllegalStateException once the runtime's close has begun
   */
  public synchronized Runnable enter() {
    if (closing) {
      throw new IllegalStateException("the executor's GPU runtime is shutting down");
    }
    inFlight++;
    AtomicBoolean left = new AtomicBoolean();
    return () -> {
      if (left.compareAndSet(false, true)) {
        leave();
      }
    };
  }

  private synchronized void leave() {
    inFlight--;
    notifyAll();
  }

  synchronized int inFlight() {
    return inFlight;
  }

  /**
   * Refuses new tasks, then waits until none is in flight, for at most the time given at
   * construction; an interrupt ends the wait too. Logs an error when one still is.
   *
   * @param device the GPU, for the log line
   * @return whether none is in flight
   */
  synchronized boolean closeAndAwait(int device) {
    closing = true;
    long deadline = System.nanoTime() + giveUp.toNanos();
    while (inFlight > 0) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        break;
      }
      try {
        TimeUnit.NANOSECONDS.timedWait(this, left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    if (inFlight > 0) {
      LOG.error(
          "{} tasks still use GPU {} {} ms after its executor began to stop: its streams, staging"
              + " buffers and memory pools are left allocated rather than freed under them",
          inFlight,
          device,
          giveUp.toMillis());
      return false;
    }
    return true;
  }
}
