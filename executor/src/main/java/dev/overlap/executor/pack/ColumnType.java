package dev.overlap.executor.pack;

import ai.rapids.cudf.DType;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampType;

/**
 * How one Spark column is laid out in cuDF memory. Spark and cuDF agree on the bytes of every
 * supported type: dates are days since the epoch in 32 bits, timestamps microseconds in 64 bits,
 * decimals unscaled integers of 32, 64 or 128 bits (cuDF's scale is Spark's, negated), booleans one
 * byte, strings UTF-8 with 32-bit offsets.
 */
public enum ColumnType {
  BOOLEAN(1),
  BYTE(1),
  SHORT(2),
  INT(4),
  LONG(8),
  FLOAT(4),
  DOUBLE(8),
  DATE(4),
  TIMESTAMP(8),
  DECIMAL32(4),
  DECIMAL64(8),
  DECIMAL128(16),
  STRING(0);

  private final int width;

  ColumnType(int width) {
    this.width = width;
  }

  /** Bytes per row of the data buffer; 0 for strings, whose data has variable length. */
  public int width() {
    return width;
  }

  public boolean isString() {
    return this == STRING;
  }

  /** The column type for a Spark type, or null when the type is not supported. */
  public static ColumnType of(DataType t) {
    if (t instanceof BooleanType) {
      return BOOLEAN;
    } else if (t instanceof ByteType) {
      return BYTE;
    } else if (t instanceof ShortType) {
      return SHORT;
    } else if (t instanceof IntegerType) {
      return INT;
    } else if (t instanceof LongType) {
      return LONG;
    } else if (t instanceof FloatType) {
      return FLOAT;
    } else if (t instanceof DoubleType) {
      return DOUBLE;
    } else if (t instanceof DateType) {
      return DATE;
    } else if (t instanceof TimestampType) {
      return TIMESTAMP;
    } else if (t instanceof StringType) {
      return STRING;
    } else if (t instanceof DecimalType d) {
      if (d.precision() <= DType.DECIMAL32_MAX_PRECISION) {
        return DECIMAL32;
      } else if (d.precision() <= DType.DECIMAL64_MAX_PRECISION) {
        return DECIMAL64;
      } else {
        return DECIMAL128;
      }
    }
    return null;
  }

  /** The cuDF type of a Spark type this enum supports. */
  public static DType dtype(DataType t) {
    ColumnType c = of(t);
    if (c == null) {
      throw new IllegalArgumentException("unsupported type " + t.simpleString());
    }
    switch (c) {
      case BOOLEAN:
        return DType.BOOL8;
      case BYTE:
        return DType.INT8;
      case SHORT:
        return DType.INT16;
      case INT:
        return DType.INT32;
      case LONG:
        return DType.INT64;
      case FLOAT:
        return DType.FLOAT32;
      case DOUBLE:
        return DType.FLOAT64;
      case DATE:
        return DType.TIMESTAMP_DAYS;
      case TIMESTAMP:
        return DType.TIMESTAMP_MICROSECONDS;
      case STRING:
        return DType.STRING;
      case DECIMAL32:
        return DType.create(DType.DTypeEnum.DECIMAL32, -((DecimalType) t).scale());
      case DECIMAL64:
        return DType.create(DType.DTypeEnum.DECIMAL64, -((DecimalType) t).scale());
      case DECIMAL128:
        return DType.create(DType.DTypeEnum.DECIMAL128, -((DecimalType) t).scale());
      default:
        throw new AssertionError(c);
    }
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
              + ". Supported: boolean, tinyint, smallint, int, bigint, float, double, date,"
              + " timestamp, string, decimal(p<=38). Cast or drop the column first.");
    }
    return out;
  }
}
