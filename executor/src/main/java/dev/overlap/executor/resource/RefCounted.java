package dev.overlap.executor.resource;

/**
 * A batch that counts its owners: made with one, {@link #retain} adds one, {@link #close} drops
 * one, and the last close frees what the batch holds ({@link #free}). Under {@code
 * spark.overlap.debug.trackBatches} every change of the count goes to the {@link BatchTracker}, so
 * a batch never closed is reported at its task's end.
 *
 * <p>Thread safety: the count changes under this object's lock; {@link #free} runs once, on the
 * thread of the last close, outside the lock.
 *
 * @param <T> the batch's own type, which {@link #retain} returns
 */
public abstract class RefCounted<T extends RefCounted<T>> implements AutoCloseable {
  private int refs = 1;
  private final BatchTracker.Held tracked;

  protected RefCounted() {
    this.tracked = BatchTracker.made(this);
  }

  /** Another owner: the batch is freed when every owner has closed it. */
  @SuppressWarnings("unchecked")
  public final T retain() {
    synchronized (this) {
      if (refs <= 0) {
        throw new IllegalStateException(getClass().getSimpleName() + " already closed");
      }
      refs++;
      BatchTracker.retained(tracked);
    }
    return (T) this;
  }

  /** Drops one owner; the last one frees the batch. */
  @Override
  public final void close() {
    boolean last;
    synchronized (this) {
      if (refs <= 0) {
        throw new IllegalStateException(
            getClass().getSimpleName() + " closed more often than retained");
      }
      BatchTracker.closed(tracked);
      last = --refs == 0;
    }
    if (last) {
      free();
    }
  }

  /** Frees what the batch holds; called once, by the last {@link #close}. */
  protected abstract void free();
}
