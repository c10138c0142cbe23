package dev.overlap.executor.pipeline;

/**
 * Bytes in flight on the device, capped. A producer {@link #acquire acquires} a batch's bytes
 * before the batch enters the pipeline and the pipeline {@link #release releases} them when the
 * batch's device memory is gone. When the cap is reached, producers wait: backpressure instead of
 * an out-of-memory failure.
 *
 * <p>A batch larger than the whole budget is admitted when nothing else is in flight, so it runs
 * alone rather than waiting forever.
 */
public final class DeviceBudget {
  private final long maxBytes;
  private long inFlight;
  private long peak;

  public DeviceBudget(long maxBytes) {
    if (maxBytes <= 0) {
      throw new IllegalArgumentException("budget must be positive: " + maxBytes);
    }
    this.maxBytes = maxBytes;
  }

  /** Blocks the calling thread until {@code bytes} fit, then counts them as in flight. */
  public synchronized void acquire(long bytes) throws InterruptedException {
    if (bytes < 0) {
      throw new IllegalArgumentException("negative bytes: " + bytes);
    }
    while (inFlight > 0 && inFlight + bytes > maxBytes) {
      wait();
    }
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
