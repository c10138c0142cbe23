package dev.overlap.executor.pipeline;

import dev.overlap.executor.resource.Closing;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fixed set of reusable buffers. {@link #acquire} blocks while all are out; the holder gives a
 * buffer back with {@link #release}. Buffers are made once, up front, and reused: no allocation per
 * batch.
 *
 * @param <B> the buffer type; closed by {@link #close}
 */
public final class BoundedPool<B extends AutoCloseable> implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BoundedPool.class);

  private final List<B> all;
  private final Deque<B> free;
  private boolean closed;

  public BoundedPool(List<B> buffers) {
    if (buffers.isEmpty()) {
      throw new IllegalArgumentException("a pool needs at least one buffer");
    }
    this.all = List.copyOf(buffers);
    this.free = new ArrayDeque<>(buffers);
  }

  /** Waits for a free buffer; the caller owns it until {@link #release}. */
  public B acquire() throws InterruptedException {
    return acquire(Waits.NEVER);
  }

  /**
   * As {@link #acquire()}, but gives up with {@link WaitCancelledException} when {@code cancelled}
   * turns true (checked every {@link Waits#POLL_MILLIS} ms while waiting; the interrupt flag is
   * left as it was) or with {@link InterruptedException} when the thread is interrupted. A wait
   * longer than {@link Waits#LOG_AFTER_NANOS} logs how many buffers are out, once.
   */
  public synchronized B acquire(BooleanSupplier cancelled) throws InterruptedException {
    long from = System.nanoTime();
    boolean logged = false;
    while (free.isEmpty() && !closed) {
      if (cancelled.getAsBoolean()) {
        throw new WaitCancelledException(
            "cancelled while waiting for a buffer (all " + all.size() + " are out)");
      }
      long waited = System.nanoTime() - from;
      if (!logged && waited >= Waits.LOG_AFTER_NANOS) {
        logged = true;
        LOG.warn(
            "{} waited {} s for a staging buffer: all {} are out",
            Thread.currentThread().getName(),
            TimeUnit.NANOSECONDS.toSeconds(waited),
            all.size());
      }
      wait(Waits.POLL_MILLIS);
    }
    if (closed) {
      throw new IllegalStateException("pool is closed");
    }
    return free.pop();
  }

  public synchronized void release(B buffer) {
    if (!all.contains(buffer) || free.contains(buffer)) {
      throw new IllegalStateException("buffer does not belong to this pool or was released twice");
    }
    if (closed) {
      Closing.all(java.util.List.of(buffer));
      return;
    }
    free.push(buffer);
    notifyAll();
  }

  public synchronized int available() {
    return free.size();
  }

  /** The buffers the pool was made with, free or out. */
  public int size() {
    return all.size();
  }

  /**
   * Closes the free buffers now and any buffer still out when it comes back, so a late release
   * never touches freed memory.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      throw new IllegalStateException("pool already closed");
    }
    closed = true;
    java.util.List<B> toClose = new ArrayList<>(free);
    free.clear();
    notifyAll();
    Closing.all(toClose);
  }
}
