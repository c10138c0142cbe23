package dev.overlap.executor.input.parquet;

import java.util.List;
import org.apache.parquet.schema.GroupType;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.LogicalTypeAnnotation.ListLogicalTypeAnnotation;
import org.apache.parquet.schema.LogicalTypeAnnotation.MapKeyValueTypeAnnotation;
import org.apache.parquet.schema.LogicalTypeAnnotation.MapLogicalTypeAnnotation;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Whether the GPU decodes a nested Parquet column exactly as Spark reads it: the standard layouts
 * only, which cuDF and Spark read alike. A list is the three-level LIST ({@code repeated group
 * list} holding one element), a map the MAP of {@code repeated group key_value} holding a required
 * key and a value, a struct a group whose fields are the Spark struct's, same names, same order (a
 * scan that prunes fields is read on the host). Each leaf is decoded to its Spark type with no cast
 * (an INT32 read as bigint, say, goes to the host), and is not binary or INT96.
 *
 * <p>Legacy layouts (two-level lists, a bare repeated field, Hive's and Impala's element names) are
 * read on the host: Spark's rules for them are its own.
 */
final class NestedColumns {
  private NestedColumns() {}

  /** Why {@code t} is not decoded as Spark reads {@code want}; null when it is. */
  static String mismatch(Type t, DataType want) {
    if (t.isRepetition(Type.Repetition.REPEATED)) {
      return "a repeated field outside a LIST or MAP (a legacy list) is read on the host";
    }
    return shape(t, want, t.getName());
  }

  private static String shape(Type t, DataType want, String path) {
    if (t.isPrimitive()) {
      return leaf(t, want, path);
    }
    GroupType g = t.asGroupType();
    LogicalTypeAnnotation a = g.getLogicalTypeAnnotation();
    if (want instanceof ArrayType arr) {
      if (!(a instanceof ListLogicalTypeAnnotation)) {
        return path + " is not a LIST";
      }
      Type repeated = only(g);
      if (repeated == null
          || !repeated.isRepetition(Type.Repetition.REPEATED)
          || repeated.isPrimitive()
          || repeated.asGroupType().getFieldCount() != 1
          || repeated.getName().equals("array")
          || repeated.getName().endsWith("_tuple")) {
        return path + " is a legacy list layout, read on the host";
      }
      return shape(repeated.asGroupType().getType(0), arr.elementType(), path + ".element");
    }
    if (want instanceof MapType m) {
      if (!(a instanceof MapLogicalTypeAnnotation || a instanceof MapKeyValueTypeAnnotation)) {
        return path + " is not a MAP";
      }
      Type entries = only(g);
      if (entries == null
          || !entries.isRepetition(Type.Repetition.REPEATED)
          || entries.isPrimitive()
          || entries.asGroupType().getFieldCount() != 2
          || !entries.asGroupType().getType(0).isRepetition(Type.Repetition.REQUIRED)) {
        return path + " is not a map of required keys and values";
      }
      GroupType kv = entries.asGroupType();
      String why = shape(kv.getType(0), m.keyType(), path + ".key");
      return why != null ? why : shape(kv.getType(1), m.valueType(), path + ".value");
    }
    if (want instanceof StructType s) {
      if (a != null) {
        return path + " is a " + a + ", read as a struct";
      }
      List<Type> fields = g.getFields();
      if (fields.size() != s.fields().length) {
        return path + " has " + fields.size() + " fields, the scan reads " + s.fields().length;
      }
      for (int i = 0; i < fields.size(); i++) {
        StructField f = s.fields()[i];
        if (!fields.get(i).getName().equals(f.name())) {
          return path + "'s fields are not the scan's, in its order";
        }
        String why = shape(fields.get(i), f.dataType(), path + "." + f.name());
        if (why != null) {
          return why;
        }
      }
      return null;
    }
    return path + " is a group, read as " + want.simpleString();
  }

  private static String leaf(Type t, DataType want, String path) {
    if (t.isRepetition(Type.Repetition.REPEATED)) {
      return path + " is a repeated field (a legacy list), read on the host";
    }
    if (want instanceof ArrayType || want instanceof MapType || want instanceof StructType) {
      return path + " is not a group, read as " + want.simpleString();
    }
    PrimitiveTypeName n = t.asPrimitiveType().getPrimitiveTypeName();
    if (want instanceof BinaryType || n == PrimitiveTypeName.INT96) {
      return path + ": binary and INT96 inside a nested column are read on the host";
    }
    if ((want instanceof LongType && n == PrimitiveTypeName.INT32)
        || (want instanceof DoubleType && n == PrimitiveTypeName.FLOAT)
        || (want instanceof DecimalType d && !sameDecimal(t, d))) {
      return path + ": a widened type inside a nested column is read on the host";
    }
    String why = FileColumns.mismatch(t, want);
    return why == null ? null : path + ": " + why;
  }

  /**
   * Whether the file's decimal decodes to exactly {@code d}'s cuDF type: the same precision and
   * scale, stored in the width the precision takes (INT32 up to 9 digits, INT64 up to 18).
   */
  private static boolean sameDecimal(Type t, DecimalType d) {
    if (!(t.getLogicalTypeAnnotation()
        instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation fd)) {
      return false;
    }
    PrimitiveTypeName n = t.asPrimitiveType().getPrimitiveTypeName();
    PrimitiveTypeName stored =
        d.precision() <= 9
            ? PrimitiveTypeName.INT32
            : d.precision() <= 18
                ? PrimitiveTypeName.INT64
                : PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY;
    return fd.getPrecision() == d.precision() && fd.getScale() == d.scale() && n == stored;
  }

  private static Type only(GroupType g) {
    return g.getFieldCount() == 1 ? g.getType(0) : null;
  }
}
