package dev.overlap.executor.input.rows;

import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostColumnVector;
import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.pipeline.PackedBatch;
import dev.overlap.executor.resource.Closing;
import dev.overlap.executor.resource.RefCounted;
import java.util.List;
import java.util.Optional;

/**
 * One packed batch: up to {@link BatchLayout#capacityRows} rows in cuDF's column layout, inside a
 * staging buffer (pinned host memory on a GPU executor); or a run of the rows of one ({@link
 * #halves}), when its upload did not fit in device memory.
 *
 * <p>Ownership: the batch holds its staging buffer until {@link #close}, which hands the buffer
 * back to whoever lent it (the executor's staging pool). The pipeline closes a batch once its
 * upload has completed. A part holds a reference to the batch it was cut from and its own string
 * offsets (rebased to start at 0); its close frees those and drops that reference. Nested columns
 * are host columns the batch owns beside the staging buffer; a batch with them is not cut.
 *
 * <p>How a batch is cut into parts is {@link RowHalves}'.
 */
public final class HostBatch extends RefCounted<HostBatch> implements PackedBatch {
  private final BatchLayout layout;
  private final DType[] dtypes;
  private final HostMemoryBuffer staging;
  private final Runnable onClose;
  private final int first;
  private final int rows;
  private final long[] nullCounts;
  private final long[] stringBytes;
  // Per string column: where its bytes start in the column's data region, and where its offsets
  // lie (the staging buffer, or a part's own buffer).
  private final long[] stringStart;
  private final HostMemoryBuffer[] offsetsIn;
  private final long[] offsetsAt;
  // Per nested column (null for the others): its host column, built outside the staging buffer
  // and owned by this batch.
  private final HostColumnVector[] nested;

  /** Takes ownership of the {@code nested} columns (null entries for flat columns). */
  HostBatch(
      BatchLayout layout,
      DType[] dtypes,
      HostMemoryBuffer staging,
      Runnable onClose,
      int rows,
      long[] nullCounts,
      long[] stringBytes,
      HostColumnVector[] nested) {
    this(
        layout,
        dtypes,
        staging,
        onClose,
        0,
        rows,
        nullCounts,
        stringBytes,
        null,
        null,
        null,
        nested);
  }

  private HostBatch(
      BatchLayout layout,
      DType[] dtypes,
      HostMemoryBuffer staging,
      Runnable onClose,
      int first,
      int rows,
      long[] nullCounts,
      long[] stringBytes,
      long[] stringStart,
      HostMemoryBuffer[] offsetsIn,
      long[] offsetsAt,
      HostColumnVector[] nested) {
    this.layout = layout;
    this.nested = nested;
    this.dtypes = dtypes;
    this.staging = staging;
    this.onClose = onClose;
    this.first = first;
    this.rows = rows;
    this.nullCounts = nullCounts;
    this.stringBytes = stringBytes;
    int n = layout.columns();
    this.stringStart = stringStart != null ? stringStart : new long[n];
    this.offsetsIn = offsetsIn != null ? offsetsIn : new HostMemoryBuffer[n];
    this.offsetsAt = offsetsAt != null ? offsetsAt : layout.offsetsOffset.clone();
    if (offsetsIn == null) {
      java.util.Arrays.fill(this.offsetsIn, staging);
    }
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

  /**
   * Offset in the staging buffer and length of the used part of a column's validity mask (a part's
   * mask starts on a byte: its first row is a multiple of 8).
   */
  public long validityOffset(int c) {
    return layout.validityOffset[c] + first / 8;
  }

  public long validityLength() {
    return BatchLayout.validityBytes(rows);
  }

  public long dataOffset(int c) {
    return layout.dataOffset[c]
        + (layout.type(c).hasOffsets() ? stringStart[c] : (long) first * layout.type(c).width());
  }

  public long dataLength(int c) {
    return layout.type(c).hasOffsets() ? stringBytes[c] : (long) rows * layout.type(c).width();
  }

  /** Where a string column's offsets lie: the staging buffer, or a part's own buffer. */
  public HostMemoryBuffer offsetsBuffer(int c) {
    return offsetsIn[c];
  }

  /** Offset of a string column's offsets in {@link #offsetsBuffer}. */
  public long offsetsOffset(int c) {
    return offsetsAt[c];
  }

  public long offsetsLength(int c) {
    return layout.type(c).hasOffsets() ? 4L * (rows + 1) : 0;
  }

  /** The host column of nested column {@code c}, which this batch owns; null for a flat column. */
  public HostColumnVector nested(int c) {
    return nested[c];
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
      if (nested[c] != null) {
        total += NestedUpload.deviceBytes(nested[c]);
        continue;
      }
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
      if (nested[c] != null) {
        total += NestedUpload.copyBytes(nested[c]);
        continue;
      }
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
      if (nested[c] != null) {
        out[c] = nested[c].incRefCount();
        continue;
      }
      HostMemoryBuffer valid =
          nullCounts[c] > 0 ? staging.slice(validityOffset(c), validityLength()) : null;
      HostMemoryBuffer data = staging.slice(dataOffset(c), Math.max(1, dataLength(c)));
      HostMemoryBuffer offsets =
          hasOffsets(c) ? offsetsIn[c].slice(offsetsOffset(c), offsetsLength(c)) : null;
      out[c] =
          new HostColumnVector(dtypes[c], rows, Optional.of(nullCounts[c]), data, valid, offsets);
    }
    return out;
  }

  /**
   * Cuts the batch into two runs of its rows, for an upload that did not fit in device memory; see
   * {@link RowHalves#of}. Each part holds a reference to this batch, which the caller still closes.
   */
  public List<HostBatch> halves() {
    return RowHalves.of(this);
  }

  /** Whether any column is nested: such a batch is not cut. */
  boolean anyNested() {
    return java.util.Arrays.stream(nested).anyMatch(java.util.Objects::nonNull);
  }

  BatchLayout layout() {
    return layout;
  }

  /** Where string column {@code c}'s bytes start in its data region. */
  long stringStart(int c) {
    return stringStart[c];
  }

  /**
   * Rows {@code [from, from + n)} of this batch, {@code from} a multiple of 8, over the same
   * staging buffer: a part without nested columns, whose string columns' bytes start at {@code
   * start} and whose offsets lie in {@code in} at {@code at}. Runs {@code release} when closed.
   */
  HostBatch part(
      int from,
      int n,
      long[] nulls,
      long[] bytes,
      long[] start,
      HostMemoryBuffer[] in,
      long[] at,
      Runnable release) {
    return new HostBatch(
        layout, dtypes, staging, release, first + from, n, nulls, bytes, start, in, at, nested);
  }

  /** The last owner gives the staging buffer back. */
  @Override
  protected void free() {
    try {
      // Parts are cut only from batches without nested columns, so each column is closed once.
      Closing.all(java.util.Arrays.stream(nested).filter(java.util.Objects::nonNull).toList());
    } finally {
      onClose.run();
    }
  }
}
