package dev.overlap.executor.types;

import java.math.BigDecimal;
import java.math.BigInteger;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.unsafe.Platform;

/**
 * How the values of one {@link ColumnType} are written into a staging buffer and, for decimals,
 * read back: one constant per byte layout, shared by the types that have it (an int is written like
 * a date, a long like a timestamp).
 *
 * <p>Spark and cuDF agree on the bytes of every supported type: dates are days since the epoch in
 * 32 bits, timestamps (with or without time zone) microseconds since the epoch in 64 bits, decimals
 * unscaled integers of 32, 64 or 128 bits (cuDF's scale is Spark's, negated), booleans one byte,
 * strings UTF-8 with 32-bit offsets.
 *
 * <p>Nulls are the caller's: {@link #put} and {@link #copy} write values only.
 */
public final class ColumnCodec {
  /** Writes column {@code c} of {@code row}, not null, at address {@code dst}. */
  @FunctionalInterface
  interface Put {
    void put(InternalRow row, int c, int precision, int scale, long dst);
  }

  /**
   * Copies values {@code [start, start + n)} of {@code v} to address {@code dst} with one array
   * copy, or returns false having written nothing.
   */
  @FunctionalInterface
  interface Copy {
    boolean copy(ColumnVector v, int start, int n, long dst);
  }

  /** Reads the decimal of row {@code row} from a column whose data starts at {@code data}. */
  @FunctionalInterface
  interface Read {
    Decimal read(long data, int row, int precision, int scale);
  }

  static final ColumnCodec BOOL8 =
      new ColumnCodec(
          (row, c, p, s, dst) -> Platform.putByte(null, dst, row.getBoolean(c) ? (byte) 1 : 0),
          (v, start, n, dst) ->
              copied(v.getBooleans(start, n), Platform.BOOLEAN_ARRAY_OFFSET, dst, n));

  static final ColumnCodec INT8 =
      new ColumnCodec(
          (row, c, p, s, dst) -> Platform.putByte(null, dst, row.getByte(c)),
          (v, start, n, dst) -> copied(v.getBytes(start, n), Platform.BYTE_ARRAY_OFFSET, dst, n));

  static final ColumnCodec INT16 =
      new ColumnCodec(
          (row, c, p, s, dst) -> Platform.putShort(null, dst, row.getShort(c)),
          (v, start, n, dst) ->
              copied(v.getShorts(start, n), Platform.SHORT_ARRAY_OFFSET, dst, 2L * n));

  /** Ints, and dates (days since the epoch). */
  static final ColumnCodec INT32 =
      new ColumnCodec(
          (row, c, p, s, dst) -> Platform.putInt(null, dst, row.getInt(c)), ColumnCodec::copyInts);

  /** Longs, and timestamps with or without time zone (microseconds since the epoch). */
  static final ColumnCodec INT64 =
      new ColumnCodec(
          (row, c, p, s, dst) -> Platform.putLong(null, dst, row.getLong(c)),
          ColumnCodec::copyLongs);

  static final ColumnCodec FLOAT32 =
      new ColumnCodec(
          (row, c, p, s, dst) -> Platform.putFloat(null, dst, row.getFloat(c)),
          (v, start, n, dst) ->
              copied(v.getFloats(start, n), Platform.FLOAT_ARRAY_OFFSET, dst, 4L * n));

  static final ColumnCodec FLOAT64 =
      new ColumnCodec(
          (row, c, p, s, dst) -> Platform.putDouble(null, dst, row.getDouble(c)),
          (v, start, n, dst) ->
              copied(v.getDoubles(start, n), Platform.DOUBLE_ARRAY_OFFSET, dst, 8L * n));

  /**
   * Strings are packed by the row input's writer itself ({@code FittedStrings}): their room in a
   * batch is shared and their offsets run on from row to row.
   */
  static final ColumnCodec STRING =
      new ColumnCodec(
          (row, c, p, s, dst) -> {
            throw new UnsupportedOperationException("strings are written with their offsets");
          },
          (v, start, n, dst) -> false);

  /** Nested types and binary are packed with cuDF's host column builder ({@code NestedAppend}). */
  static final ColumnCodec NESTED =
      new ColumnCodec(
          (row, c, p, s, dst) -> {
            throw new UnsupportedOperationException("nested values are built, not put");
          },
          (v, start, n, dst) -> false);

  /** Precision up to 9: an unscaled int (Spark's vectors keep these as ints too). */
  static final ColumnCodec DECIMAL32 =
      new ColumnCodec(
          (row, c, p, s, dst) ->
              Platform.putInt(null, dst, (int) row.getDecimal(c, p, s).toUnscaledLong()),
          (v, start, n, dst) -> v instanceof WritableColumnVector && copyInts(v, start, n, dst),
          (data, row, p, s) -> Decimal.createUnsafe(Platform.getInt(null, data + 4L * row), p, s));

  /** Precision 10 to 18: an unscaled long (and in Spark's vectors). */
  static final ColumnCodec DECIMAL64 =
      new ColumnCodec(
          (row, c, p, s, dst) ->
              Platform.putLong(null, dst, row.getDecimal(c, p, s).toUnscaledLong()),
          (v, start, n, dst) -> v instanceof WritableColumnVector && copyLongs(v, start, n, dst),
          (data, row, p, s) -> Decimal.createUnsafe(Platform.getLong(null, data + 8L * row), p, s));

  /** Precision 19 to 38: two's complement, little-endian, 16 bytes; written value by value. */
  static final ColumnCodec DECIMAL128 =
      new ColumnCodec(
          ColumnCodec::putDecimal128, (v, start, n, dst) -> false, ColumnCodec::readDecimal128);

  private static final BigInteger LOW_64 = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

  private final Put put;
  private final Copy copy;
  private final Read read; // null for types that are not decimals

  private ColumnCodec(Put put, Copy copy) {
    this(put, copy, null);
  }

  private ColumnCodec(Put put, Copy copy, Read read) {
    this.put = put;
    this.copy = copy;
    this.read = read;
  }

  void put(InternalRow row, int c, int precision, int scale, long dst) {
    put.put(row, c, precision, scale, dst);
  }

  /**
   * Copies values {@code [start, start + n)} of {@code v} to address {@code dst} with one array
   * copy; nulls aside.
   *
   * @return false, having written nothing, when the column must go value by value instead: strings,
   *     128-bit decimals, decimals outside Spark's own vectors, and dictionary-encoded vectors with
   *     nulls (those decode each value, and a null's dictionary id may be garbage)
   */
  boolean copy(ColumnVector v, int start, int n, long dst) {
    if (v.hasNull() && v instanceof WritableColumnVector w && w.hasDictionary()) {
      return false;
    }
    return copy.copy(v, start, n, dst);
  }

  boolean readsDecimals() {
    return read != null;
  }

  /** Only for a codec that {@link #readsDecimals}. */
  Decimal readDecimal(long data, int row, int precision, int scale) {
    return read.read(data, row, precision, scale);
  }

  private static boolean copied(Object array, long arrayOffset, long dst, long bytes) {
    Platform.copyMemory(array, arrayOffset, null, dst, bytes);
    return true;
  }

  private static boolean copyInts(ColumnVector v, int start, int n, long dst) {
    return copied(v.getInts(start, n), Platform.INT_ARRAY_OFFSET, dst, 4L * n);
  }

  private static boolean copyLongs(ColumnVector v, int start, int n, long dst) {
    return copied(v.getLongs(start, n), Platform.LONG_ARRAY_OFFSET, dst, 8L * n);
  }

  private static void putDecimal128(InternalRow row, int c, int precision, int scale, long dst) {
    BigInteger v = row.getDecimal(c, precision, scale).toJavaBigDecimal().unscaledValue();
    Platform.putLong(null, dst, v.longValue());
    Platform.putLong(null, dst + 8, v.shiftRight(64).longValue());
  }

  private static Decimal readDecimal128(long data, int row, int precision, int scale) {
    long lo = Platform.getLong(null, data + 16L * row);
    long hi = Platform.getLong(null, data + 16L * row + 8);
    BigInteger v = BigInteger.valueOf(hi).shiftLeft(64).add(BigInteger.valueOf(lo).and(LOW_64));
    return Decimal.apply(new BigDecimal(v, scale), precision, scale);
  }
}
