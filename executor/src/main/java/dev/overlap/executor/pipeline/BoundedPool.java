package dev.overlap.executor.pipeline;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * A fixed set of reusable buffers. {@link #acquire} blocks while all are out; the holder gives a
 * buffer back with {@link #release}. Buffers are made once, up front, and reused: no allocation per
 * batch.
 *
 * @param <B> the buffer type; closed by {@link #close}
 */
public final class BoundedPool<B extends AutoCloseable> implements AutoCloseable {
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
  public synchronized B acquire() throws InterruptedException {
    while (free.isEmpty() && !closed) {
      wait();
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
