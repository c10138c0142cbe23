package dev.overlap.executor.device;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.Table;
import dev.overlap.executor.pack.HostBatch;
import dev.overlap.executor.pipeline.BatchTracker;

/**
 * A batch on its way to or on the device: the columns (whose memory the copy stream may still be
 * filling), the event recorded after the batch's copies, and a reference to the packed host batch
 * those copies read from.
 *
 * <p>{@link #awaitCopied} blocks until the copies are done and then gives the host reference back,
 * which returns the staging buffer to its pool. It may be called from the upload thread (waiting
 * for the previous copy before returning) and from the compute thread (before the kernel) alike;
 * the first call releases, later calls return at once. {@link #close} waits for the copies too, so
 * a batch dropped before it computed never frees memory a copy is still using.
 */
public final class DeviceBatch implements Uploaded {
  private final Table table;
  private final Cuda.Event copied;
  private HostBatch host;
  private int refs = 1;
  private final BatchTracker.Held tracked;
  private long copiedAtNanos;

  /** Takes ownership of all three. */
  DeviceBatch(Table table, Cuda.Event copied, HostBatch host) {
    this.table = table;
    this.copied = copied;
    this.host = host;
    this.tracked = BatchTracker.made(this);
  }

  /** Another owner: the batch is freed when every owner has closed it. */
  public synchronized DeviceBatch retain() {
    if (refs <= 0) {
      throw new IllegalStateException("DeviceBatch already closed");
    }
    refs++;
    BatchTracker.retained(tracked);
    return this;
  }

  /** Makes {@code stream} wait, on the device, for this batch's copies; the host does not wait. */
  public void streamWaitsForCopies(Cuda.Stream stream) {
    stream.waitOn(copied);
  }

  /**
   * The columns; only valid to read after {@link #awaitCopied}, or from work queued on a stream
   * after {@link #streamWaitsForCopies}.
   */
  public Table table() {
    return table;
  }

  /** Waits for this batch's copies and releases the host batch; returns when they completed. */
  @Override
  public synchronized long awaitCopied() {
    if (host != null) {
      copied.sync();
      copiedAtNanos = System.nanoTime();
      HostBatch h = host;
      host = null;
      h.close();
    }
    return copiedAtNanos;
  }

  /** Drops one owner; the last one waits for the copies and frees the columns and the event. */
  @Override
  public synchronized void close() {
    if (refs <= 0) {
      throw new IllegalStateException("DeviceBatch closed twice");
    }
    BatchTracker.closed(tracked);
    if (--refs > 0) {
      return;
    }
    try {
      awaitCopied();
    } finally {
      try {
        table.close();
      } finally {
        copied.close();
      }
    }
  }
}
