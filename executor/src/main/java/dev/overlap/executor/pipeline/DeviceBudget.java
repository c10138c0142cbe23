package dev.overlap.executor.pipeline;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bytes in flight on the device, capped. A producer {@link #acquire acquires} a batch's bytes
 * before the batch enters the pipeline, the pipeline {@link #charge charges} its kernel output's
 * bytes when compute ends, and {@link #release releases} both when the batch's device memory is
 * gone. When the cap is reached, producers wait: backpressure instead of an out-of-memory failure.
 *
 * <p>A batch larger than the whole budget is admitted when nothing else is in flight, so it runs
 * alone rather than waiting forever.
 *
 * <p>Admission is first come, first served: a request waits while an earlier one waits, so a large
 * request is never overtaken indefinitely by small ones that would fit beside what is in flight.
 */
public final class DeviceBudget {
  private static final Logger LOG = LoggerFactory.getLogger(DeviceBudget.class);

  private final long maxBytes;
  private long inFlight;
  private long peak;

  /** Requests waiting, oldest first; only the head may be admitted. */
  private final Deque<Object> waiting = new ArrayDeque<>();

  public DeviceBudget(long maxBytes) {
    if (maxBytes <= 0) {
      throw new IllegalArgumentException("budget must be positive: " + maxBytes);
    }
    this.maxBytes = maxBytes;
  }

  /**
   * Blocks the calling thread until every earlier request is admitted and {@code bytes} fit, then
   * counts them as in flight.
   */
  public void acquire(long bytes) throws InterruptedException {
    acquire(bytes, Waits.NEVER);
  }

  /**
   * As {@link #acquire(long)}, but gives up with {@link WaitCancelledException} when {@code
   * cancelled} turns true (checked every {@link Waits#POLL_MILLIS} ms while waiting; the interrupt
   * flag is left as it was) or with {@link InterruptedException} when the thread is interrupted. A
   * wait longer than {@link Waits#LOG_AFTER_NANOS} logs what is in flight, once.
   */
  public synchronized void acquire(long bytes, BooleanSupplier cancelled)
      throws InterruptedException {
    if (bytes < 0) {
      throw new IllegalArgumentException("negative bytes: " + bytes);
    }
    if (waiting.isEmpty() && fits(bytes)) {
      admit(bytes);
      return;
    }
    Object me = new Object();
    waiting.addLast(me);
    long from = System.nanoTime();
    boolean logged = false;
    try {
      while (waiting.peekFirst() != me || !fits(bytes)) {
        if (cancelled.getAsBoolean()) {
          throw new WaitCancelledException(
              "cancelled while waiting for "
                  + bytes
                  + " bytes of the device budget ("
                  + inFlight
                  + " of "
                  + maxBytes
                  + " bytes in flight)");
        }
        long waited = System.nanoTime() - from;
        if (!logged && waited >= Waits.LOG_AFTER_NANOS) {
          logged = true;
          LOG.warn(
              "{} waited {} s for {} bytes of the device budget: {} of {} bytes in flight,"
                  + " {} requests waiting",
              Thread.currentThread().getName(),
              TimeUnit.NANOSECONDS.toSeconds(waited),
              bytes,
              inFlight,
              maxBytes,
              waiting.size());
        }
        wait(Waits.POLL_MILLIS);
      }
    } finally {
      boolean head = waiting.peekFirst() == me;
      waiting.remove(me);
      if (head) {
        // The next request in line may fit now.
        notifyAll();
      }
    }
    admit(bytes);
  }

  private boolean fits(long bytes) {
    return inFlight == 0 || inFlight + bytes <= maxBytes;
  }

  private void admit(long bytes) {
    inFlight += bytes;
    peak = Math.max(peak, inFlight);
  }

  /**
   * Counts {@code bytes} already on the device (a kernel's output) as in flight at once, without
   * waiting, even past the cap: they exist whether or not they fit, and while they are counted,
   * requests wait longer. {@link #release} gives them back.
   */
  public synchronized void charge(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("negative bytes: " + bytes);
    }
    admit(bytes);
  }

  public synchronized void release(long bytes) {
    if (bytes > inFlight) {
      throw new IllegalStateException("releasing " + bytes + " bytes, only " + inFlight + " held");
    }
    inFlight -= bytes;
    notifyAll();
  }

  /** Requests waiting to be admitted. */
  public synchronized int waiting() {
    return waiting.size();
  }

  public synchronized long inFlight() {
    return inFlight;
  }

  /** The most bytes ever in flight at once. */
  public synchronized long peak() {
    return peak;
  }

  public long maxBytes() {
    return maxBytes;
  }
}
