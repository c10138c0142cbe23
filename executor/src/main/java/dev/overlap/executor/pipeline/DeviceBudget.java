package dev.overlap.executor.pipeline;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Bytes in flight on the device, capped. A producer {@link #acquire acquires} a batch's bytes
 * before the batch enters the pipeline and the pipeline {@link #release releases} them when the
 * batch's device memory is gone. When the cap is reached, producers wait: backpressure instead of
 * an out-of-memory failure.
 *
 * <p>A batch larger than the whole budget is admitted when nothing else is in flight, so it runs
 * alone rather than waiting forever.
 *
 * <p>Admission is first come, first served: a request waits while an earlier one waits, so a large
 * request is never overtaken indefinitely by small ones that would fit beside what is in flight.
 */
public final class DeviceBudget {
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
  public synchronized void acquire(long bytes) throws InterruptedException {
    if (bytes < 0) {
      throw new IllegalArgumentException("negative bytes: " + bytes);
    }
    if (waiting.isEmpty() && fits(bytes)) {
      admit(bytes);
      return;
    }
    Object me = new Object();
    waiting.addLast(me);
    try {
      while (waiting.peekFirst() != me || !fits(bytes)) {
        wait();
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
