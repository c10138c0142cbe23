package dev.overlap.executor.input.rows;

import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The flat columns of the batch being packed, as regions of its staging buffer in cuDF's layout:
 * validity masks, fixed-width values, string bytes and offsets. Counts each column's nulls and
 * string bytes as they are written. Not thread-safe; used by its writer's thread only.
 */
final class StagingColumns {
  private final BatchLayout layout;
  private final long base;
  private final long[] nullCounts;
  private final long[] stringBytes;

  /**
   * Opens the columns of a staging buffer at {@code address}: every row valid, every string
   * column's first offset 0.
   */
  StagingColumns(BatchLayout layout, long address) {
    this.layout = layout;
    this.base = address;
    for (int c = 0; c < layout.columns(); c++) {
      if (layout.type(c).nested()) {
        continue;
      }
      Platform.setMemory(
          address + layout.validityOffset[c],
          (byte) 0xFF,
          BatchLayout.validityBytes(layout.capacityRows));
      if (layout.type(c).hasOffsets()) {
        Platform.putInt(null, address + layout.offsetsOffset[c], 0);
      }
    }
    this.nullCounts = new long[layout.columns()];
    this.stringBytes = new long[layout.columns()];
  }

  /** Each column's nulls so far; the batch keeps this array. */
  long[] nullCounts() {
    return nullCounts;
  }

  /** Each string column's bytes so far; the batch keeps this array. */
  long[] stringBytes() {
    return stringBytes;
  }

  long stringBytes(int c) {
    return stringBytes[c];
  }

  /** Address of row {@code row}'s value in fixed-width column {@code c}. */
  long valueAddress(int c, int row) {
    return base + layout.dataOffset[c] + (long) row * layout.type(c).width();
  }

  void setNull(int c, int row) {
    long addr = base + layout.validityOffset[c] + (row >>> 3);
    byte b = Platform.getByte(null, addr);
    Platform.putByte(null, addr, (byte) (b & ~(1 << (row & 7))));
    nullCounts[c]++;
  }

  /** Writes a null as row {@code row} of string column {@code c}: its bit, and an empty value. */
  void putNullString(int c, int row) {
    setNull(c, row);
    Platform.putInt(null, offsetAddress(c, row + 1), (int) stringBytes[c]);
  }

  void putString(int c, int row, UTF8String s) {
    int len = s.numBytes();
    long dst = base + layout.dataOffset[c] + stringBytes[c];
    Platform.copyMemory(s.getBaseObject(), s.getBaseOffset(), null, dst, len);
    stringBytes[c] += len;
    Platform.putInt(null, offsetAddress(c, row + 1), (int) stringBytes[c]);
  }

  private long offsetAddress(int c, int index) {
    return base + layout.offsetsOffset[c] + 4L * index;
  }
}
