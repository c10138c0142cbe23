package dev.overlap.executor.pack;

import ai.rapids.cudf.DType;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.unsafe.Platform;

/**
 * How one Spark column is laid out in cuDF memory, one constant per type: which Spark types it
 * takes, its width and cuDF type, whether it has offsets, how a row's value and a column range are
 * written into a staging buffer, and how a decimal is read back. Adding a type is adding a
 * constant.
 *
 * <p>Spark and cuDF agree on the bytes of every supported type: dates are days since the epoch in
 * 32 bits, timestamps (with or without time zone) microseconds since the epoch in 64 bits, decimals
 * unscaled integers of 32, 64 or 128 bits (cuDF's scale is Spark's, negated), booleans one byte,
 * strings UTF-8 with 32-bit offsets.
 *
 * <p>Nulls are the caller's: {@link #put} and {@link #copy} write values only.
 */
public enum ColumnType {
  BOOLEAN(1, DType.BOOL8, "boolean", t -> t instanceof BooleanType) {
    @Override
    void put(InternalRow row, int c, int precision, int scale, long dst) {
      Platform.putByte(null, dst, row.getBoolean(c) ? (byte) 1 : (byte) 0);
    }

    @Override
    boolean copyValues(ColumnVector v, int start, int n, long dst) {
      Platform.copyMemory(v.getBooleans(start, n), Platform.BOOLEAN_ARRAY_OFFSET, null, dst, n);
      return true;
    }
  },
  BYTE(1, DType.INT8, "tinyint", t -> t instanceof ByteType) {
    @Override
    void put(InternalRow row, int c, int precision, int scale, long dst) {
      Platform.putByte(null, dst, row.getByte(c));
    }

    @Override
    boolean copyValues(ColumnVector v, int start, int n, long dst) {
      Platform.copyMemory(v.getBytes(start, n), Platform.BYTE_ARRAY_OFFSET, null, dst, n);
      return true;
    }
  },
  SHORT(2, DType.INT16, "smallint", t -> t instanceof ShortType) {
    @Override
    void put(InternalRow row, int c, int precision, int scale, long dst) {
      Platform.putShort(null, dst, row.getShort(c));
    }

    @Override
    boolean copyValues(ColumnVector v, int start, int n, long dst) {
      Platform.copyMemory(v.getShorts(start, n), Platform.SHORT_ARRAY_OFFSET, null, dst, 2L * n);
      return true;
    }
  },
  INT(4, DType.INT32, "int", t -> t instanceof IntegerType) {
    @Override
    void put(InternalRow row, int c, int precision, int scale, long dst) {
      Platform.putInt(null, dst, row.getInt(c));
    }

    @Override
    boolean copyValues(ColumnVector v, int start, int n, long dst) {
      return copyInts(v, start, n, dst);
    }
  },
  LONG(8, DType.INT64, "bigint", t -> t instanceof LongType) {
    @Override
    void put(InternalRow row, int c, int precision, int scale, long dst) {
      Platform.putLong(null, dst, row.getLong(c));
    }

    @Override
    boolean copyValues(ColumnVector v, int start, int n, long dst) {
      return copyLongs(v, start, n, dst);
    }
  },
  FLOAT(4, DType.FLOAT32, "float", t -> t instanceof FloatType) {
    @Override
    void put(InternalRow row, int c, int precision, int scale, long dst) {
      Platform.putFloat(null, dst, row.getFloat(c));
    }

    @Override
    boolean copyValues(ColumnVector v, int start, int n, long dst) {
      Platform.copyMemory(v.getFloats(start, n), Platform.FLOAT_ARRAY_OFFSET, null, dst, 4L * n);
      return true;
    }
  },
  DOUBLE(8, DType.FLOAT64, "double", t -> t instanceof DoubleType) {
    @Override
    void put(InternalRow row, int c, int precision, int scale, long dst) {
      Platform.putDouble(null, dst, row.getDouble(c));
    }

    @Override
    boolean copyValues(ColumnVector v, int start, int n, long dst) {
      Platform.copyMemory(v.getDoubles(start, n), Platform.DOUBLE_ARRAY_OFFSET, null, dst, 8L * n);
      return true;
    }
  },
  /** Days since the epoch. */
  DATE(4, DType.TIMESTAMP_DAYS, "date", t -> t instanceof DateType) {
    @Override
    void put(InternalRow row, int c, int precision, int scale, long dst) {
      Platform.putInt(null, dst, row.getInt(c));
    }

    @Override
    boolean copyValues(ColumnVector v, int start, int n, long dst) {
      return copyInts(v, start, n, dst);
    }
  },
  /** Microseconds since the epoch, UTC (Spark's TIMESTAMP, with the session's time zone). */
  TIMESTAMP(8, DType.TIMESTAMP_MICROSECONDS, "timestamp", t -> t instanceof TimestampType) {
    @Override
    void put(InternalRow row, int c, int precision, int scale, long dst) {
      Platform.putLong(null, dst, row.getLong(c));
    }

    @Override
    boolean copyValues(ColumnVector v, int start, int n, long dst) {
      return copyLongs(v, start, n, dst);
    }
  },
  /**
   * Microseconds since the epoch of a wall-clock time, no time zone (Spark's TIMESTAMP_NTZ, what
   * pandas, Arrow and DuckDB write for naive timestamps). cuDF has no separate type: its UTC parts
   * are the wall-clock parts.
   */
  TIMESTAMP_NTZ(
      8, DType.TIMESTAMP_MICROSECONDS, "timestamp_ntz", t -> t instanceof TimestampNTZType) {
    @Override
    void put(InternalRow row, int c, int precision, int scale, long dst) {
      Platform.putLong(null, dst, row.getLong(c));
    }

    @Override
    boolean copyValues(ColumnVector v, int start, int n, long dst) {
      return copyLongs(v, start, n, dst);
    }
  },
  /**
   * UTF-8 bytes and {@code rows + 1} 32-bit offsets. The writer packs them itself ({@link
   * FittedStrings}): their room in a batch is shared and their offsets run on from row to row.
   */
  STRING(0, DType.STRING, "string", t -> t instanceof StringType) {
    @Override
    public boolean hasOffsets() {
      return true;
    }

    @Override
    void put(InternalRow row, int c, int precision, int scale, long dst) {
      throw new UnsupportedOperationException("strings are written with their offsets");
    }

    @Override
    boolean copyValues(ColumnVector v, int start, int n, long dst) {
      return false;
    }
  },
  /** Precision up to 9: an unscaled int (Spark's vectors keep these as ints too). */
  DECIMAL32(
      4,
      DType.DTypeEnum.DECIMAL32,
      t -> t instanceof DecimalType d && d.precision() <= DType.DECIMAL32_MAX_PRECISION) {
    @Override
    void put(InternalRow row, int c, int precision, int scale, long dst) {
      Platform.putInt(null, dst, (int) row.getDecimal(c, precision, scale).toUnscaledLong());
    }

    @Override
    boolean copyValues(ColumnVector v, int start, int n, long dst) {
      return v instanceof WritableColumnVector && copyInts(v, start, n, dst);
    }

    @Override
    public Decimal readDecimal(long data, int row, int precision, int scale) {
      return Decimal.createUnsafe(Platform.getInt(null, data + 4L * row), precision, scale);
    }
  },
  /** Precision 10 to 18: an unscaled long (and in Spark's vectors). */
  DECIMAL64(
      8,
      DType.DTypeEnum.DECIMAL64,
      t ->
          t instanceof DecimalType d
              && d.precision() > DType.DECIMAL32_MAX_PRECISION
              && d.precision() <= DType.DECIMAL64_MAX_PRECISION) {
    @Override
    void put(InternalRow row, int c, int precision, int scale, long dst) {
      Platform.putLong(null, dst, row.getDecimal(c, precision, scale).toUnscaledLong());
    }

    @Override
    boolean copyValues(ColumnVector v, int start, int n, long dst) {
      return v instanceof WritableColumnVector && copyLongs(v, start, n, dst);
    }

    @Override
    public Decimal readDecimal(long data, int row, int precision, int scale) {
      return Decimal.createUnsafe(Platform.getLong(null, data + 8L * row), precision, scale);
    }
  },
  /** Precision 19 to 38: two's complement, little-endian, 16 bytes; written value by value. */
  DECIMAL128(
      16,
      DType.DTypeEnum.DECIMAL128,
      t -> t instanceof DecimalType d && d.precision() > DType.DECIMAL64_MAX_PRECISION) {
    @Override
    void put(InternalRow row, int c, int precision, int scale, long dst) {
      BigInteger v = row.getDecimal(c, precision, scale).toJavaBigDecimal().unscaledValue();
      Platform.putLong(null, dst, v.longValue());
      Platform.putLong(null, dst + 8, v.shiftRight(64).longValue());
    }

    @Override
    boolean copyValues(ColumnVector v, int start, int n, long dst) {
      return false;
    }

    @Override
    public Decimal readDecimal(long data, int row, int precision, int scale) {
      long lo = Platform.getLong(null, data + 16L * row);
      long hi = Platform.getLong(null, data + 16L * row + 8);
      BigInteger v =
          BigInteger.valueOf(hi)
              .shiftLeft(64)
              .add(
                  BigInteger.valueOf(lo)
                      .and(BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE)));
      return Decimal.apply(new java.math.BigDecimal(v, scale), precision, scale);
    }
  };

  private static final String DECIMAL_NAME = "decimal(p<=38)";

  private final int width;
  private final DType dtype; // null for decimals: their cuDF type carries the column's scale
  private final DType.DTypeEnum decimal;
  private final String sqlName;
  private final Predicate<DataType> takes;

  ColumnType(int width, DType dtype, String sqlName, Predicate<DataType> takes) {
    this.width = width;
    this.dtype = dtype;
    this.decimal = null;
    this.sqlName = sqlName;
    this.takes = takes;
  }

  ColumnType(int width, DType.DTypeEnum decimal, Predicate<DataType> takes) {
    this.width = width;
    this.dtype = null;
    this.decimal = decimal;
    this.sqlName = DECIMAL_NAME;
    this.takes = takes;
  }

  /** Bytes per row of the data buffer; 0 for strings, whose data has variable length. */
  public int width() {
    return width;
  }

  /** Whether the column has a 32-bit offsets buffer ({@code rows + 1} entries) after its data. */
  public boolean hasOffsets() {
    return false;
  }

  /** The cuDF type of Spark type {@code t}, which this constant {@link #of} takes. */
  public DType dtype(DataType t) {
    return dtype != null ? dtype : DType.create(decimal, -((DecimalType) t).scale());
  }

  /** Writes column {@code c} of {@code row}, not null, at address {@code dst}. */
  abstract void put(InternalRow row, int c, int precision, int scale, long dst);

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
    return copyValues(v, start, n, dst);
  }

  abstract boolean copyValues(ColumnVector v, int start, int n, long dst);

  /**
   * Reads back the decimal of row {@code row} from a column whose data starts at address {@code
   * data}.
   *
   * @throws UnsupportedOperationException when this is not a decimal type
   */
  public Decimal readDecimal(long data, int row, int precision, int scale) {
    throw new UnsupportedOperationException("not a decimal column: " + sqlName);
  }

  private static boolean copyInts(ColumnVector v, int start, int n, long dst) {
    Platform.copyMemory(v.getInts(start, n), Platform.INT_ARRAY_OFFSET, null, dst, 4L * n);
    return true;
  }

  private static boolean copyLongs(ColumnVector v, int start, int n, long dst) {
    Platform.copyMemory(v.getLongs(start, n), Platform.LONG_ARRAY_OFFSET, null, dst, 8L * n);
    return true;
  }

  /** The column type for a Spark type, or null when the type is not supported. */
  public static ColumnType of(DataType t) {
    for (ColumnType c : values()) {
      if (c.takes.test(t)) {
        return c;
      }
    }
    return null;
  }

  /** The cuDF type of a Spark type this enum supports. */
  public static DType dtypeOf(DataType t) {
    ColumnType c = of(t);
    if (c == null) {
      throw new IllegalArgumentException("unsupported type " + t.simpleString());
    }
    return c.dtype(t);
  }

  /** The supported Spark types, as Spark SQL names them, comma-separated. */
  public static String supportedTypes() {
    Set<String> names = new LinkedHashSet<>();
    for (ColumnType c : values()) {
      names.add(c.sqlName);
    }
    return String.join(", ", names);
  }

  /**
   * The column type of every field, in order.
   *
   * @param what names the schema in the error ("input of GpuPartitions.map", ...)
   * @throws UnsupportedColumnException naming every column whose type is not supported
   */
  public static ColumnType[] forSchema(StructType schema, String what) {
    ColumnType[] out = new ColumnType[schema.fields().length];
    List<String> bad = new ArrayList<>();
    for (int i = 0; i < out.length; i++) {
      StructField f = schema.fields()[i];
      out[i] = of(f.dataType());
      if (out[i] == null) {
        bad.add("'" + f.name() + "' (" + f.dataType().simpleString() + ")");
      }
    }
    if (!bad.isEmpty()) {
      throw new UnsupportedColumnException(
          what
              + ": unsupported column type: "
              + String.join(", ", bad)
              + ". Supported: "
              + supportedTypes()
              + ". Cast or drop the column first.");
    }
    return out;
  }
}
