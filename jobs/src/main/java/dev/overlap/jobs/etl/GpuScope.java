package dev.overlap.jobs.etl;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The cuDF columns, scalars and tables a kernel makes while it works on one batch, closed together
 * when the batch is done: each is {@linkplain #own owned} as it is made, and {@link #close} closes
 * them all, newest first, even when one of them fails to close. What a kernel returns must not be
 * owned here.
 */
class GpuScope implements AutoCloseable {
  private final Deque<AutoCloseable> owned = new ArrayDeque<>();

  /** Takes {@code x} to be closed by {@link #close}; returns it. */
  <T extends AutoCloseable> T own(T x) {
    owned.push(x);
    return x;
  }

  /**
   * Closes everything owned, newest first; the first failure is thrown with the later ones
   * suppressed in it.
   */
  @Override
  public void close() {
    RuntimeException first = null;
    while (!owned.isEmpty()) {
      try {
        owned.pop().close();
      } catch (Exception e) {
        RuntimeException r = e instanceof RuntimeException re ? re : new RuntimeException(e);
        if (first == null) {
          first = r;
        } else {
          first.addSuppressed(r);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
