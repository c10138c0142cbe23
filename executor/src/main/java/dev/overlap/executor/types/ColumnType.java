package dev.overlap.executor.types;

import ai.rapids.cudf.DType;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
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
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.vectorized.ColumnVector;

/**
 * How one Spark column is laid out in cuDF memory, one constant per type: which Spark types it
 * takes, its width and cuDF type, whether it has offsets; how its values are written and read is
 * its {@link ColumnCodec}. Also the lookup from a Spark schema to column types, with the message
 * naming what is not supported. Adding a type is adding a constant (and a codec when its bytes are
 * new).
 *
 * <p>Nulls are the caller's: {@link #put} and {@link #copy} write values only.
 */
public enum ColumnType {
  BOOLEAN(1, DType.BOOL8, "boolean", t -> t instanceof BooleanType, ColumnCodec.BOOL8),
  BYTE(1, DType.INT8, "tinyint", t -> t instanceof ByteType, ColumnCodec.INT8),
  SHORT(2, DType.INT16, "smallint", t -> t instanceof ShortType, ColumnCodec.INT16),
  INT(4, DType.INT32, "int", t -> t instanceof IntegerType, ColumnCodec.INT32),
  LONG(8, DType.INT64, "bigint", t -> t instanceof LongType, ColumnCodec.INT64),
  FLOAT(4, DType.FLOAT32, "float", t -> t instanceof FloatType, ColumnCodec.FLOAT32),
  DOUBLE(8, DType.FLOAT64, "double", t -> t instanceof DoubleType, ColumnCodec.FLOAT64),
  /** Days since the epoch. */
  DATE(4, DType.TIMESTAMP_DAYS, "date", t -> t instanceof DateType, ColumnCodec.INT32),
  /** Microseconds since the epoch, UTC (Spark's TIMESTAMP, with the session's time zone). */
  TIMESTAMP(
      8,
      DType.TIMESTAMP_MICROSECONDS,
      "timestamp",
      t -> t instanceof TimestampType,
      ColumnCodec.INT64),
  /**
   * Microseconds since the epoch of a wall-clock time, no time zone (Spark's TIMESTAMP_NTZ, what
   * pandas, Arrow and DuckDB write for naive timestamps). cuDF has no separate type: its UTC parts
   * are the wall-clock parts.
   */
  TIMESTAMP_NTZ(
      8,
      DType.TIMESTAMP_MICROSECONDS,
      "timestamp_ntz",
      t -> t instanceof TimestampNTZType,
      ColumnCodec.INT64),
  /**
   * UTF-8 bytes and {@code rows + 1} 32-bit offsets. The row input's writer packs them itself
   * ({@code FittedStrings}): their room in a batch is shared and their offsets run on from row to
   * row.
   */
  STRING(0, DType.STRING, "string", t -> t instanceof StringType, ColumnCodec.STRING),
  /** Precision up to 9: an unscaled int (Spark's vectors keep these as ints too). */
  DECIMAL32(
      4,
      DType.DTypeEnum.DECIMAL32,
      t -> t instanceof DecimalType d && d.precision() <= DType.DECIMAL32_MAX_PRECISION,
      ColumnCodec.DECIMAL32),
  /** Precision 10 to 18: an unscaled long (and in Spark's vectors). */
  DECIMAL64(
      8,
      DType.DTypeEnum.DECIMAL64,
      t ->
          t instanceof DecimalType d
              && d.precision() > DType.DECIMAL32_MAX_PRECISION
              && d.precision() <= DType.DECIMAL64_MAX_PRECISION,
      ColumnCodec.DECIMAL64),
  /** Precision 19 to 38: two's complement, little-endian, 16 bytes; written value by value. */
  DECIMAL128(
      16,
      DType.DTypeEnum.DECIMAL128,
      t -> t instanceof DecimalType d && d.precision() > DType.DECIMAL64_MAX_PRECISION,
      ColumnCodec.DECIMAL128),
  /** Bytes: a LIST of UINT8, one list per row ({@link NestedTypes} gives every nested layout). */
  BINARY(0, DType.LIST, "binary", t -> t instanceof BinaryType, ColumnCodec.NESTED),
  /** A LIST whose child is the element type's column. */
  ARRAY(
      0,
      DType.LIST,
      "array<T>",
      t -> t instanceof ArrayType && NestedTypes.takes(t),
      ColumnCodec.NESTED),
  /** A LIST of STRUCT{@code <key, value>}. */
  MAP(
      0,
      DType.LIST,
      "map<K,V>",
      t -> t instanceof MapType && NestedTypes.takes(t),
      ColumnCodec.NESTED),
  /** A STRUCT with one child per field. */
  STRUCT(
      0,
      DType.STRUCT,
      "struct<...>",
      t -> t instanceof StructType && NestedTypes.takes(t),
      ColumnCodec.NESTED);

  private static final String DECIMAL_NAME = "decimal(p<=38)";

  private final int width;
  private final DType dtype; // null for decimals: their cuDF type carries the column's scale
  private final DType.DTypeEnum decimal;
  private final String sqlName;
  private final Predicate<DataType> takes;
  private final ColumnCodec codec;

  ColumnType(int width, DType dtype, String sqlName, Predicate<DataType> takes, ColumnCodec codec) {
    this.width = width;
    this.dtype = dtype;
    this.decimal = null;
    this.sqlName = sqlName;
    this.takes = takes;
    this.codec = codec;
  }

  ColumnType(int width, DType.DTypeEnum decimal, Predicate<DataType> takes, ColumnCodec codec) {
    this.width = width;
    this.dtype = null;
    this.decimal = decimal;
    this.sqlName = DECIMAL_NAME;
    this.takes = takes;
    this.codec = codec;
  }

  /** Bytes per row of the data buffer; 0 for strings and nested types, of variable length. */
  public int width() {
    return width;
  }

  /**
   * Whether the column is nested (or binary): packed with cuDF's host column builder outside the
   * staging layout, its children uploaded with it.
   */
  public boolean nested() {
    return this == BINARY || this == ARRAY || this == MAP || this == STRUCT;
  }

  /** Whether the column has a 32-bit offsets buffer ({@code rows + 1} entries) after its data. */
  public boolean hasOffsets() {
    return this == STRING;
  }

  /** The cuDF type of Spark type {@code t}, which this constant {@link #of} takes. */
  public DType dtype(DataType t) {
    return dtype != null ? dtype : DType.create(decimal, -((DecimalType) t).scale());
  }

  /** Writes column {@code c} of {@code row}, not null, at address {@code dst}. */
  public void put(InternalRow row, int c, int precision, int scale, long dst) {
    codec.put(row, c, precision, scale, dst);
  }

  /**
   * Copies values {@code [start, start + n)} of {@code v} to address {@code dst} with one array
   * copy; nulls aside.
   *
   * @return false, having written nothing, when the column must go value by value instead (see
   *     {@link ColumnCodec#copy})
   */
  public boolean copy(ColumnVector v, int start, int n, long dst) {
    return codec.copy(v, start, n, dst);
  }

  /**
   * Reads back the decimal of row {@code row} from a column whose data starts at address {@code
   * data}.
   *
   * @throws UnsupportedOperationException when this is not a decimal type
   */
  public Decimal readDecimal(long data, int row, int precision, int scale) {
    if (!codec.readsDecimals()) {
      throw new UnsupportedOperationException("not a decimal column: " + sqlName);
    }
    return codec.readDecimal(data, row, precision, scale);
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

  /** {@link #dtypeOf} of each of {@code schema}'s columns. */
  public static DType[] dtypesOf(org.apache.spark.sql.types.StructType schema) {
    DType[] types = new DType[schema.fields().length];
    for (int i = 0; i < types.length; i++) {
      types[i] = dtypeOf(schema.fields()[i].dataType());
    }
    return types;
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
    java.util.Optional<String> bad = unsupported(schema, what);
    if (bad.isPresent()) {
      throw new UnsupportedColumnException(bad.get() + ". Cast or drop the column first.");
    }
    ColumnType[] out = new ColumnType[schema.fields().length];
    for (int i = 0; i < out.length; i++) {
      out[i] = of(schema.fields()[i].dataType());
    }
    return out;
  }

  /**
   * Why the GPU does not take {@code schema}: every column whose type is not supported, named with
   * its type, and the supported types; empty when it takes every column.
   *
   * @param what names the schema ("input of GpuPartitions.map", ...)
   */
  public static java.util.Optional<String> unsupported(StructType schema, String what) {
    return unsupportedColumns(schema)
        .map(
            bad -> what + ": unsupported column type: " + bad + ". Supported: " + supportedTypes());
  }

  /**
   * The columns of {@code schema} whose type is not supported, each with its type; empty if none.
   */
  public static java.util.Optional<String> unsupportedColumns(StructType schema) {
    List<String> bad = new ArrayList<>();
    for (StructField f : schema.fields()) {
      if (of(f.dataType()) == null) {
        bad.add("'" + f.name() + "' (" + f.dataType().simpleString() + ")");
      }
    }
    return bad.isEmpty()
        ? java.util.Optional.empty()
        : java.util.Optional.of(String.join(", ", bad));
  }
}
