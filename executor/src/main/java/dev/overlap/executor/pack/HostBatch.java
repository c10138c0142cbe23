package dev.overlap.executor.pack;

import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostColumnVector;
import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.pipeline.BatchTracker;
import dev.overlap.executor.pipeline.PackedBatch;
import java.util.Optional;

/**
 * One packed batch: up to {@link BatchLayout#capacityRows} rows in cuDF's column layout, inside a
 * staging buffer (pinned host memory on a GPU executor).
 *
 * <p>Ownership: the batch holds its staging buffer until {@link #close}, which hands the buffer
 * back to whoever lent it (the executor's staging pool). The pipeline closes a batch once its
 * upload has completed.
 */
public final class HostBatch implements PackedBatch {
  private final BatchLayout layout;
  private final DType[] dtypes;
  private final HostMemoryBuffer staging;
  private final Runnable onClose;
  private final int rows;
  private final long[] nullCounts;
  private final long[] stringBytes;
  private int refs = 1;
  private final BatchTracker.Held tracked;

  HostBatch(
      BatchLayout layout,
      DType[] dtypes,
      HostMemoryBuffer staging,
      Runnable onClose,
      int rows,
      long[] nullCounts,
      long[] stringBytes) {
    this.layout = layout;
    this.dtypes = dtypes;
    this.staging = staging;
    this.onClose = onClose;
    this.rows = rows;
    this.nullCounts = nullCounts;
    this.stringBytes = stringBytes;
    this.tracked = BatchTracker.made(this);
  }

  @Override
  public int rows() {
    return rows;
  }

  public int columns() {
    return layout.columns();
  }

  public long nullCount(int column) {
    return nullCounts[column];
  }

  public DType dtype(int column) {
    return dtypes[column];
  }

  public HostMemoryBuffer staging() {
    return staging;
  }

  /** Offset in the staging buffer and length of the used part of a column's validity mask. */
  public long validityOffset(int c) {
    return layout.validityOffset[c];
  }

  public long validityLength() {
    return BatchLayout.validityBytes(rows);
  }

  public long dataOffset(int c) {
    return layout.dataOffset[c];
  }

  public long dataLength(int c) {
    return layout.type(c).hasOffsets() ? stringBytes[c] : (long) rows * layout.type(c).width();
  }

  public long offsetsOffset(int c) {
    return layout.offsetsOffset[c];
  }

  public long offsetsLength(int c) {
    return layout.type(c).hasOffsets() ? 4L * (rows + 1) : 0;
  }

  /** Whether column {@code c} has an offsets buffer (strings). */
  public boolean hasOffsets(int c) {
    return layout.type(c).hasOffsets();
  }

  /** Bytes this batch occupies on the device once uploaded: the used regions, each aligned. */
  @Override
  public long deviceBytes() {
    long total = 0;
    for (int c = 0; c < columns(); c++) {
      if (nullCounts[c] > 0) {
        total += BatchLayout.align(validityLength());
      }
      total += BatchLayout.align(Math.max(1, dataLength(c)));
      total += BatchLayout.align(offsetsLength(c));
    }
    return total;
  }

  /** Bytes copied to the device for this batch. */
  @Override
  public long copyBytes() {
    long total = 0;
    for (int c = 0; c < columns(); c++) {
      total += (nullCounts[c] > 0 ? validityLength() : 0) + dataLength(c) + offsetsLength(c);
    }
    return total;
  }

  /**
   * Host column views over the staging buffer, without copying: for reading a batch back on the
   * host. The caller closes them; the staging buffer stays alive until they and this batch are
   * closed.
   */
  public HostColumnVector[] toHostColumns() {
    HostColumnVector[] out = new HostColumnVector[columns()];
    for (int c = 0; c < out.length; c++) {
      HostMemoryBuffer valid =
          nullCounts[c] > 0 ? staging.slice(validityOffset(c), validityLength()) : null;
      HostMemoryBuffer data = staging.slice(dataOffset(c), Math.max(1, dataLength(c)));
      HostMemoryBuffer offsets =
          hasOffsets(c) ? staging.slice(offsetsOffset(c), offsetsLength(c)) : null;
      out[c] =
          new HostColumnVector(dtypes[c], rows, Optional.of(nullCounts[c]), data, valid, offsets);
    }
    return out;
  }

  /** Adds a reference; the staging buffer goes back only when every reference is closed. */
  public synchronized HostBatch retain() {
    if (refs <= 0) {
      throw new IllegalStateException("HostBatch already released");
    }
    refs++;
    BatchTracker.retained(tracked);
    return this;
  }

  @Override
  public void close() {
    boolean last;
    synchronized (this) {
      if (refs <= 0) {
        throw new IllegalStateException("HostBatch closed more often than retained");
      }
      last = --refs == 0;
      BatchTracker.closed(tracked);
    }
    if (last) {
      onClose.run();
    }
  }
}
