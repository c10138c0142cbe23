package dev.overlap.executor.pack;

import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostMemoryBuffer;
import java.math.BigInteger;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Packs rows or Spark columnar batches into a staging buffer in cuDF's column layout. One writer
 * serves one task: {@link #begin} a batch in a staging buffer, {@link #append} rows or {@link
 * #appendColumns} column ranges until it is full, then {@link #finish}.
 *
 * <p>Columnar input is copied column by column: fixed-width values in bulk (one array copy per
 * column and range), strings value by value. Rows are written value by value.
 *
 * <p>Not thread-safe; used by its task's thread only.
 */
public final class HostBatchWriter {
  private final StructType schema;
  private final BatchLayout layout;
  private final DType[] dtypes;
  private final int[] precision;
  private final int[] scale;

  private HostMemoryBuffer staging;
  private Runnable release;
  private long base;
  private int rows;
  private long[] nullCounts;
  private long[] stringBytes;
  // Per string column: the values fitStrings read, for copyStrings to write without reading again.
  private final UTF8String[][] fitted;
  // Per string column: values decoded from a dictionary in this call, by id (see decoded()).
  private final UTF8String[][] dictValues;
  private final int[][] dictStamps;
  private int generation;

  public HostBatchWriter(StructType schema, BatchLayout layout) {
    this.schema = schema;
    this.layout = layout;
    int n = layout.columns();
    dtypes = new DType[n];
    fitted = new UTF8String[n][];
    dictValues = new UTF8String[n][];
    dictStamps = new int[n][];
    precision = new int[n];
    scale = new int[n];
    for (int c = 0; c < n; c++) {
      dtypes[c] = ColumnType.dtype(schema.fields()[c].dataType());
      if (schema.fields()[c].dataType() instanceof DecimalType d) {
        precision[c] = d.precision();
        scale[c] = d.scale();
      }
    }
  }

  public BatchLayout layout() {
    return layout;
  }

  /**
   * Starts a batch in {@code buffer}, which must hold {@link BatchLayout#totalBytes} bytes. The
   * batch {@link #finish} returns owns the buffer and runs {@code release} when it is closed.
   */
  public void begin(HostMemoryBuffer buffer, Runnable release) {
    if (staging != null) {
      throw new IllegalStateException("a batch is already open");
    }
    if (buffer.getLength() < layout.totalBytes) {
      throw new IllegalArgumentException(
          "staging buffer of " + buffer.getLength() + " bytes, layout needs " + layout.totalBytes);
    }
    this.staging = buffer;
    this.release = release;
    this.base = buffer.getAddress();
    this.rows = 0;
    this.nullCounts = new long[layout.columns()];
    this.stringBytes = new long[layout.columns()];
    for (int c = 0; c < layout.columns(); c++) {
      Platform.setMemory(
          base + layout.validityOffset[c],
          (byte) 0xFF,
          BatchLayout.validityBytes(layout.capacityRows));
      if (layout.type(c).isString()) {
        Platform.putInt(null, base + layout.offsetsOffset[c], 0);
      }
    }
  }

  public int rows() {
    return rows;
  }

  public boolean isFull() {
    return rows >= layout.capacityRows;
  }

  /** Hands the packed batch over; the writer is ready for the next {@link #begin}. */
  public HostBatch finish() {
    if (staging == null) {
      throw new IllegalStateException("no batch is open");
    }
    HostBatch b = new HostBatch(layout, dtypes, staging, release, rows, nullCounts, stringBytes);
    staging = null;
    release = null;
    return b;
  }

  /**
   * Gives the staging buffer back without producing a batch (the input failed mid-batch). Safe to
   * call when no batch is open.
   */
  public void abort() {
    if (staging != null) {
      Runnable r = release;
      staging = null;
      release = null;
      r.run();
    }
  }

  // ---- rows ------------------------------------------------------------------------------------

  /**
   * Appends one row.
   *
   * @return false when the row does not fit (the batch is full, or a string column's share of the
   *     buffer is); nothing was written and the caller starts a new batch with this row
   * @throws IllegalArgumentException when the row does not fit even an empty batch
   */
  public boolean append(InternalRow row) {
    if (isFull()) {
      return false;
    }
    for (int c = 0; c < layout.columns(); c++) {
      if (layout.type(c).isString() && !row.isNullAt(c)) {
        long len = row.getUTF8String(c).numBytes();
        if (stringBytes[c] + len > layout.dataCapacity[c]) {
          if (rows == 0) {
            throw tooLarge(c, len);
          }
          return false;
        }
      }
    }
    for (int c = 0; c < layout.columns(); c++) {
      writeValue(c, row, rows);
    }
    rows++;
    return true;
  }

  /** Writes column {@code c} of {@code row} as row {@code at} of the batch. */
  private void writeValue(int c, InternalRow row, int at) {
    ColumnType t = layout.type(c);
    long dst = base + layout.dataOffset[c] + (long) at * t.width();
    if (row.isNullAt(c)) {
      setNull(c, at);
      if (t.isString()) {
        Platform.putInt(null, offsetAddress(c, at + 1), (int) stringBytes[c]);
      }
      return;
    }
    switch (t) {
      case BOOLEAN:
        Platform.putByte(null, dst, row.getBoolean(c) ? (byte) 1 : (byte) 0);
        break;
      case BYTE:
        Platform.putByte(null, dst, row.getByte(c));
        break;
      case SHORT:
        Platform.putShort(null, dst, row.getShort(c));
        break;
      case INT:
      case DATE:
        Platform.putInt(null, dst, row.getInt(c));
        break;
      case LONG:
      case TIMESTAMP:
        Platform.putLong(null, dst, row.getLong(c));
        break;
      case FLOAT:
        Platform.putFloat(null, dst, row.getFloat(c));
        break;
      case DOUBLE:
        Platform.putDouble(null, dst, row.getDouble(c));
        break;
      case DECIMAL32:
        Platform.putInt(
            null, dst, (int) row.getDecimal(c, precision[c], scale[c]).toUnscaledLong());
        break;
      case DECIMAL64:
        Platform.putLong(null, dst, row.getDecimal(c, precision[c], scale[c]).toUnscaledLong());
        break;
      case DECIMAL128:
        putInt128(
            dst, row.getDecimal(c, precision[c], scale[c]).toJavaBigDecimal().unscaledValue());
        break;
      case STRING:
        putString(c, at, row.getUTF8String(c));
        break;
      default:
        throw new AssertionError(t);
    }
  }

  // ---- columnar --------------------------------------------------------------------------------

  /**
   * Appends rows {@code [start, start + n)} of {@code batch} for as many rows as fit.
   *
   * @return how many rows were appended; fewer than asked when the batch filled up
   */
  public int appendColumns(ColumnarBatch batch, int start, int n) {
    int take = Math.min(n, layout.capacityRows - rows);
    for (int c = 0; c < layout.columns(); c++) {
      if (layout.type(c).isString()) {
        take = fitStrings(c, batch.column(c), start, take);
      }
    }
    if (take == 0) {
      return 0;
    }
    for (int c = 0; c < layout.columns(); c++) {
      if (layout.type(c).isString()) {
        copyStrings(c, take);
      } else if (!copyBulk(c, batch.column(c), start, take)) {
        for (int i = 0; i < take; i++) {
          writeValue(c, batch.getRow(start + i), rows + i);
        }
      }
    }
    rows += take;
    return take;
  }

  /**
   * Reads up to {@code take} values of string column {@code c} into {@link #fitted} (null for a
   * null), stopping at the first that does not fit the column's share of the buffer.
   *
   * @return how many fit
   */
  private int fitStrings(int c, ColumnVector v, int start, int take) {
    if (fitted[c] == null || fitted[c].length < take) {
      fitted[c] = new UTF8String[Math.max(take, 1024)];
    }
    UTF8String[] vals = fitted[c];
    // A dictionary-encoded vector copies a value's bytes out of the dictionary on every read:
    // decode each id once per call (the dictionary may change with the next batch).
    WritableColumnVector ids =
        v instanceof WritableColumnVector w && w.hasDictionary() ? w.getDictionaryIds() : null;
    if (++generation == 0) { // wrapped: no stamp may look current
      generation = 1;
      for (int[] stamps : dictStamps) {
        if (stamps != null) {
          java.util.Arrays.fill(stamps, 0);
        }
      }
    }
    long room = layout.dataCapacity[c] - stringBytes[c];
    for (int i = 0; i < take; i++) {
      if (v.isNullAt(start + i)) {
        vals[i] = null;
        continue;
      }
      UTF8String s =
          ids == null
              ? v.getUTF8String(start + i)
              : decoded(c, v, ids.getDictId(start + i), i + start);
      int len = s.numBytes();
      room -= len;
      if (room < 0) {
        if (rows == 0 && i == 0) {
          throw tooLarge(c, len);
        }
        return i;
      }
      vals[i] = s;
    }
    return take;
  }

  /** Dictionary ids below this are decoded once per call; larger ones on every read. */
  private static final int DICTIONARY_CACHE_IDS = 1 << 16;

  private UTF8String decoded(int c, ColumnVector v, int id, int row) {
    if (id < 0 || id >= DICTIONARY_CACHE_IDS) {
      return v.getUTF8String(row);
    }
    if (dictValues[c] == null || dictValues[c].length <= id) {
      // Grown arrays start empty: values of this call decoded so far are decoded again.
      int size = Math.min(DICTIONARY_CACHE_IDS, Math.max(64, 2 * (id + 1)));
      dictValues[c] = new UTF8String[size];
      dictStamps[c] = new int[size];
    }
    if (dictStamps[c][id] != generation) {
      dictValues[c][id] = v.getUTF8String(row);
      dictStamps[c][id] = generation;
    }
    return dictValues[c][id];
  }

  /** Writes the first {@code take} values {@link #fitStrings} read for column {@code c}. */
  private void copyStrings(int c, int take) {
    UTF8String[] vals = fitted[c];
    for (int i = 0; i < take; i++) {
      UTF8String s = vals[i];
      vals[i] = null; // the values may point into the source batch, which the reader reuses
      if (s == null) {
        setNull(c, rows + i);
        Platform.putInt(null, offsetAddress(c, rows + i + 1), (int) stringBytes[c]);
      } else {
        putString(c, rows + i, s);
      }
    }
  }

  /**
   * Copies a fixed-width column range with one array copy, and its nulls.
   *
   * @return false when the column must go value by value instead (strings, decimals outside Spark's
   *     own vectors, 128-bit decimals, dictionary-encoded vectors with nulls)
   */
  private boolean copyBulk(int c, ColumnVector v, int start, int n) {
    ColumnType t = layout.type(c);
    boolean nulls = v.hasNull();
    // A dictionary-encoded vector decodes each value, and a null's dictionary id may be garbage.
    if (t.isString()
        || t == ColumnType.DECIMAL128
        || (isDecimal(t) && !(v instanceof WritableColumnVector))
        || (nulls && v instanceof WritableColumnVector w && w.hasDictionary())) {
      return false;
    }
    if (nulls) {
      for (int i = 0; i < n; i++) {
        if (v.isNullAt(start + i)) {
          setNull(c, rows + i);
        }
      }
    }
    long dst = base + layout.dataOffset[c] + (long) rows * t.width();
    switch (t) {
      case BOOLEAN:
        Platform.copyMemory(v.getBooleans(start, n), Platform.BOOLEAN_ARRAY_OFFSET, null, dst, n);
        break;
      case BYTE:
        Platform.copyMemory(v.getBytes(start, n), Platform.BYTE_ARRAY_OFFSET, null, dst, n);
        break;
      case SHORT:
        Platform.copyMemory(v.getShorts(start, n), Platform.SHORT_ARRAY_OFFSET, null, dst, 2L * n);
        break;
      case INT:
      case DATE:
      case DECIMAL32: // Spark's vectors keep decimals of precision <= 9 as ints
        Platform.copyMemory(v.getInts(start, n), Platform.INT_ARRAY_OFFSET, null, dst, 4L * n);
        break;
      case LONG:
      case TIMESTAMP:
      case DECIMAL64: // and those of precision <= 18 as longs
        Platform.copyMemory(v.getLongs(start, n), Platform.LONG_ARRAY_OFFSET, null, dst, 8L * n);
        break;
      case FLOAT:
        Platform.copyMemory(v.getFloats(start, n), Platform.FLOAT_ARRAY_OFFSET, null, dst, 4L * n);
        break;
      case DOUBLE:
        Platform.copyMemory(
            v.getDoubles(start, n), Platform.DOUBLE_ARRAY_OFFSET, null, dst, 8L * n);
        break;
      default:
        throw new AssertionError(t);
    }
    return true;
  }

  private static boolean isDecimal(ColumnType t) {
    return t == ColumnType.DECIMAL32 || t == ColumnType.DECIMAL64 || t == ColumnType.DECIMAL128;
  }

  // ---- shared ----------------------------------------------------------------------------------

  private void setNull(int c, int row) {
    long addr = base + layout.validityOffset[c] + (row >>> 3);
    byte b = Platform.getByte(null, addr);
    Platform.putByte(null, addr, (byte) (b & ~(1 << (row & 7))));
    nullCounts[c]++;
  }

  private long offsetAddress(int c, int index) {
    return base + layout.offsetsOffset[c] + 4L * index;
  }

  private void putString(int c, int row, UTF8String s) {
    int len = s.numBytes();
    long dst = base + layout.dataOffset[c] + stringBytes[c];
    Platform.copyMemory(s.getBaseObject(), s.getBaseOffset(), null, dst, len);
    stringBytes[c] += len;
    Platform.putInt(null, offsetAddress(c, row + 1), (int) stringBytes[c]);
  }

  /** Two's complement, little-endian, 16 bytes: cuDF's DECIMAL128 layout. */
  private static void putInt128(long dst, BigInteger v) {
    Platform.putLong(null, dst, v.longValue());
    Platform.putLong(null, dst + 8, v.shiftRight(64).longValue());
  }

  private IllegalArgumentException tooLarge(int c, long len) {
    return new IllegalArgumentException(
        "a value of string column '"
            + schema.fields()[c].name()
            + "' has "
            + len
            + " bytes, more than a batch reserves for that column ("
            + layout.dataCapacity[c]
            + "); raise spark.overlap.batch.stringBytesPerRow or spark.overlap.staging.bufferSize");
  }
}
