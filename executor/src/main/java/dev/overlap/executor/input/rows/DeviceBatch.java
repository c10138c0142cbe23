package dev.overlap.executor.input.rows;

import ai.rapids.cudf.ContiguousTable;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.Table;
import dev.overlap.executor.gpu.Uploaded;
import dev.overlap.executor.resource.Closing;
import dev.overlap.executor.resource.RefCounted;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

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
 *
 * <p>A batch whose kernel did not fit in device memory is {@link #halves split} on the device: each
 * half is a copy of its rows (one allocation, no copy from the host to wait for).
 */
public final class DeviceBatch extends RefCounted<DeviceBatch> implements Uploaded {
  private final Table table;
  private final AutoCloseable memory;
  private final Cuda.Event copied;
  private HostBatch host;
  private long copiedAtNanos;

  /** Takes ownership of all three. */
  DeviceBatch(Table table, Cuda.Event copied, HostBatch host) {
    this(table, table, copied, host);
  }

  /** A half: {@code part} owns the table and its memory. */
  private DeviceBatch(ContiguousTable part) {
    this(part.getTable(), part, null, null);
  }

  private DeviceBatch(Table table, AutoCloseable memory, Cuda.Event copied, HostBatch host) {
    this.table = table;
    this.memory = memory;
    this.copied = copied;
    this.host = host;
  }

  /** The columns; only valid to read after {@link #awaitCopied}. */
  public Table table() {
    return table;
  }

  /** Waits for this batch's copies and releases the host batch; returns when they completed. */
  @Override
  public synchronized long awaitCopied() {
    if (host != null && copied != null) {
      copied.sync();
      copiedAtNanos = System.nanoTime();
      HostBatch h = host;
      host = null;
      h.close();
    }
    return copiedAtNanos;
  }

  /** The last owner waits for the copies and frees the columns and the event. */
  @Override
  protected void free() {
    try {
      awaitCopied();
    } finally {
      try {
        Closing.all(List.of(memory));
      } finally {
        if (copied != null) {
          copied.close();
        }
      }
    }
  }

  /**
   * Splits the rows in two halves on the device, for a kernel that did not fit: each half a copy in
   * one allocation of its own, made on this thread's stream, which is synchronized before this
   * returns (the caller then closes this batch, freeing the whole). Empty for a single row.
   */
  public List<DeviceBatch> halves() {
    awaitCopied();
    long rows = table.getRowCount();
    if (rows < 2) {
      return List.of();
    }
    ContiguousTable[] parts = table.contiguousSplit((int) (rows / 2));
    List<DeviceBatch> out = new ArrayList<>();
    try {
      Cuda.DEFAULT_STREAM.sync();
      for (ContiguousTable p : parts) {
        out.add(new DeviceBatch(p));
      }
      return out;
    } catch (RuntimeException e) {
      throw Closing.after(e, Arrays.asList(parts));
    }
  }
}
