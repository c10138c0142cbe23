package dev.overlap.executor.input.rows;

import ai.rapids.cudf.HostColumnVector.ColumnBuilder;
import dev.overlap.executor.types.NestedTypes;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.MapData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Appends one Spark value, nested or not, to a cuDF host column builder laid out by {@link
 * NestedTypes#hostType}: lists through their child and {@code endList}, structs through each field
 * and {@code endStruct}, maps as lists of key-value structs. Reads rows, arrays and maps alike
 * (Spark's {@link SpecializedGetters}), unsafe or not.
 */
final class NestedAppend {
  private NestedAppend() {}

  /**
   * Appends value {@code i} of {@code src}, of Spark type {@code t}, to {@code b}.
   *
   * @return about how many bytes it adds on the device (values, offsets and validity)
   */
  static long append(ColumnBuilder b, SpecializedGetters src, int i, DataType t) {
    if (src.isNullAt(i)) {
      b.appendNull();
      return 8;
    }
    if (t instanceof BinaryType) {
      byte[] bytes = src.getBinary(i);
      b.appendByteList(bytes, 0, bytes.length);
      return 4L + bytes.length;
    }
    if (t instanceof ArrayType a) {
      ArrayData values = src.getArray(i);
      ColumnBuilder child = b.getChild(0);
      long bytes = 4;
      for (int k = 0; k < values.numElements(); k++) {
        bytes += append(child, values, k, a.elementType());
      }
      b.endList();
      return bytes;
    }
    if (t instanceof MapType m) {
      MapData map = src.getMap(i);
      ArrayData keys = map.keyArray();
      ArrayData values = map.valueArray();
      ColumnBuilder entries = b.getChild(0);
      long bytes = 4;
      for (int k = 0; k < map.numElements(); k++) {
        bytes += append(entries.getChild(0), keys, k, m.keyType());
        bytes += append(entries.getChild(1), values, k, m.valueType());
        entries.endStruct();
      }
      b.endList();
      return bytes;
    }
    if (t instanceof StructType s) {
      InternalRow row = src.getStruct(i, s.fields().length);
      long bytes = 1;
      for (int f = 0; f < s.fields().length; f++) {
        bytes += append(b.getChild(f), row, f, s.fields()[f].dataType());
      }
      b.endStruct();
      return bytes;
    }
    return appendFlat(b, src, i, t);
  }

  private static long appendFlat(ColumnBuilder b, SpecializedGetters src, int i, DataType t) {
    if (t instanceof StringType) {
      UTF8String s = src.getUTF8String(i);
      b.appendUTF8String(s.getBytes());
      return 4L + s.numBytes();
    } else if (t instanceof BooleanType) {
      b.append(src.getBoolean(i));
      return 1;
    } else if (t instanceof ByteType) {
      b.append(src.getByte(i));
      return 1;
    } else if (t instanceof ShortType) {
      b.append(src.getShort(i));
      return 2;
    } else if (t instanceof IntegerType || t instanceof DateType) {
      b.append(src.getInt(i));
      return 4;
    } else if (t instanceof LongType
        || t instanceof TimestampType
        || t instanceof TimestampNTZType) {
      b.append(src.getLong(i));
      return 8;
    } else if (t instanceof FloatType) {
      b.append(src.getFloat(i));
      return 4;
    } else if (t instanceof DoubleType) {
      b.append(src.getDouble(i));
      return 8;
    } else if (t instanceof DecimalType d) {
      org.apache.spark.sql.types.Decimal v = src.getDecimal(i, d.precision(), d.scale());
      if (d.precision() <= ai.rapids.cudf.DType.DECIMAL32_MAX_PRECISION) {
        b.append((int) v.toUnscaledLong());
        return 4;
      } else if (d.precision() <= ai.rapids.cudf.DType.DECIMAL64_MAX_PRECISION) {
        b.append(v.toUnscaledLong());
        return 8;
      }
      b.append(v.toJavaBigDecimal().unscaledValue());
      return 16;
    }
    throw new IllegalArgumentException("no cuDF layout for " + t.simpleString());
  }
}
