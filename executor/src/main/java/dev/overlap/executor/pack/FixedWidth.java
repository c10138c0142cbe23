package dev.overlap.executor.pack;

import java.math.BigInteger;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.unsafe.Platform;

/**
 * Fixed-width values written into a staging buffer: one value of a row, or a range of a Spark
 * column vector with one array copy. Nulls are the caller's.
 */
final class FixedWidth {
  private FixedWidth() {}

  /**
   * Whether {@link #copy} can take {@code v}: not for strings, decimals outside Spark's own
   * vectors, 128-bit decimals, or dictionary-encoded vectors with nulls (those decode each value,
   * and a null's dictionary id may be garbage).
   */
  static boolean accepts(ColumnType t, ColumnVector v) {
    return !(t.isString()
        || t == ColumnType.DECIMAL128
        || (isDecimal(t) && !(v instanceof WritableColumnVector))
        || (v.hasNull() && v instanceof WritableColumnVector w && w.hasDictionary()));
  }

  /** Copies values {@code [start, start + n)} of {@code v} to address {@code dst}; nulls aside. */
  static void copy(ColumnType t, ColumnVector v, int start, int n, long dst) {
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
  }

  /** Writes column {@code c} of {@code row}, not null, at address {@code dst}. */
  static void put(ColumnType t, InternalRow row, int c, int precision, int scale, long dst) {
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
        Platform.putInt(null, dst, (int) row.getDecimal(c, precision, scale).toUnscaledLong());
        break;
      case DECIMAL64:
        Platform.putLong(null, dst, row.getDecimal(c, precision, scale).toUnscaledLong());
        break;
      case DECIMAL128:
        putInt128(dst, row.getDecimal(c, precision, scale).toJavaBigDecimal().unscaledValue());
        break;
      default:
        throw new AssertionError(t);
    }
  }

  /** Two's complement, little-endian, 16 bytes: cuDF's DECIMAL128 layout. */
  private static void putInt128(long dst, BigInteger v) {
    Platform.putLong(null, dst, v.longValue());
    Platform.putLong(null, dst + 8, v.shiftRight(64).longValue());
  }

  private static boolean isDecimal(ColumnType t) {
    return t == ColumnType.DECIMAL32 || t == ColumnType.DECIMAL64 || t == ColumnType.DECIMAL128;
  }
}
