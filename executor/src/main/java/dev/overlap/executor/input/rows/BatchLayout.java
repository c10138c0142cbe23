package dev.overlap.executor.input.rows;

import dev.overlap.executor.types.ColumnType;

/**
 * Where each column's buffers sit inside one staging buffer, for a batch of up to {@link
 * #capacityRows} rows. Computed once per task from the schema; every batch of the task reuses it.
 *
 * <p>Per column: a validity bit mask (cuDF's layout: bit {@code i} of the 64-byte padded mask is
 * row {@code i}, set when valid), then the data (fixed width: {@code rows * width} bytes; strings:
 * the UTF-8 bytes), then for strings the {@code rows + 1} 32-bit offsets. Nested columns and binary
 * take no room here: each batch builds them as cuDF host columns of their own, and a batch ends
 * once they hold {@link #bufferBytes} bytes.
 */
public final class BatchLayout {
  /** Regions start on this boundary, in host and device memory. */
  static final long ALIGN = 256;

  final ColumnType[] types;
  final int capacityRows;
  final long[] validityOffset;
  final long[] dataOffset;
  final long[] dataCapacity;
  final long[] offsetsOffset;
  final long totalBytes;

  /** The staging buffer's size: also the most bytes a batch's nested columns may hold. */
  final long bufferBytes;

  /**
   * @param bufferBytes the staging buffer's size
   * @param maxRows the most rows a batch may hold
   * @param stringBytesPerRow bytes of UTF-8 reserved per row for each string column
   * @throws IllegalArgumentException when not even one row fits, naming the key to raise
   */
  public BatchLayout(ColumnType[] types, long bufferBytes, int maxRows, int stringBytesPerRow) {
    this.types = types.clone();
    int n = types.length;
    double perRow = 0;
    for (ColumnType t : types) {
      if (!t.nested()) {
        perRow += 1.0 / 8 + (t.hasOffsets() ? 4 + stringBytesPerRow : t.width());
      }
    }
    long fixedPadding = (long) n * 3 * ALIGN + 64L * n;
    long rows = perRow == 0 ? maxRows : (long) ((bufferBytes - fixedPadding) / perRow);
    rows = Math.min(rows, maxRows);
    if (rows < 1) {
      throw new IllegalArgumentException(
          "spark.overlap.staging.bufferSize ("
              + bufferBytes
              + " bytes) cannot hold one row of "
              + n
              + " columns; raise it");
    }
    this.capacityRows = (int) rows;
    validityOffset = new long[n];
    dataOffset = new long[n];
    dataCapacity = new long[n];
    offsetsOffset = new long[n];
    long at = 0;
    for (int i = 0; i < n; i++) {
      if (types[i].nested()) {
        // Built with cuDF's host column builder, outside the staging buffer.
        validityOffset[i] = dataOffset[i] = offsetsOffset[i] = at;
        continue;
      }
      validityOffset[i] = at;
      at = align(at + validityBytes(capacityRows));
      dataOffset[i] = at;
      dataCapacity[i] =
          types[i].hasOffsets()
              ? (long) capacityRows * stringBytesPerRow
              : (long) capacityRows * types[i].width();
      at = align(at + dataCapacity[i]);
      offsetsOffset[i] = at;
      if (types[i].hasOffsets()) {
        at = align(at + 4L * (capacityRows + 1));
      }
    }
    this.totalBytes = at;
    this.bufferBytes = bufferBytes;
    if (totalBytes > bufferBytes) {
      throw new AssertionError("layout " + totalBytes + " exceeds buffer " + bufferBytes);
    }
  }

  public int capacityRows() {
    return capacityRows;
  }

  public int columns() {
    return types.length;
  }

  public ColumnType type(int column) {
    return types[column];
  }

  /** Bytes of a validity mask for {@code rows} rows, padded as cuDF pads it (64 bytes). */
  static long validityBytes(long rows) {
    return ((rows + 511) / 512) * 64;
  }

  /** Where the first column's data starts: after its validity mask, aligned. */
  public static long validityBytesPadded(long rows) {
    return align(validityBytes(rows));
  }

  public static long align(long v) {
    return (v + ALIGN - 1) / ALIGN * ALIGN;
  }
}
