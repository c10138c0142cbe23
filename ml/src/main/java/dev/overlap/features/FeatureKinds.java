package dev.overlap.features;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/** The kinds of column the encoder encodes: which Spark types they are, their words, their SQL. */
final class FeatureKinds {
  private FeatureKinds() {}

  /** The words for a kind in a line to the user. */
  static String name(FeaturePlan.Kind k) {
    switch (k) {
      case NUMERIC:
        return "a number";
      case DATE:
        return "date";
      case TIMESTAMP:
        return "timestamp";
      case TIMESTAMP_NTZ:
        return "timestamp_ntz";
      case STRING:
        return "string";
      default:
        throw new AssertionError(k);
    }
  }

  /** The types the encoder encodes, in words. */
  static final String ENCODED =
      "numbers (tinyint to double, and decimal), date, timestamp, timestamp_ntz and string";

  /**
   * The refusal of an input none of whose columns is of a type the encoder encodes: its columns
   * with their types (the first 20), why none gets a feature, and what to do.
   */
  static String noneEncoded(StructType schema) {
    if (schema.isEmpty()) {
      return "the input has no column, so the encoder would make no feature; it encodes " + ENCODED;
    }
    List<String> named = new ArrayList<>();
    StructField[] fields = schema.fields();
    for (int i = 0; i < Math.min(fields.length, 20); i++) {
      named.add(fields[i].name() + " (" + fields[i].dataType().simpleString() + ")");
    }
    if (fields.length > 20) {
      named.add("and " + (fields.length - 20) + " more");
    }
    return "no column of the input gets a feature: "
        + String.join(", ", named)
        + (fields.length == 1 ? " is of a type" : " are of types")
        + " the encoder does not encode; it encodes "
        + ENCODED
        + ": cast a column to one of these types, or give an input that has one";
  }

  static FeaturePlan.Kind of(DataType t) {
    if (t instanceof BooleanType) {
      return null;
    } else if (t instanceof NumericType || t instanceof DecimalType) {
      return FeaturePlan.Kind.NUMERIC;
    } else if (t instanceof DateType) {
      return FeaturePlan.Kind.DATE;
    } else if (t instanceof TimestampType) {
      return FeaturePlan.Kind.TIMESTAMP;
    } else if (t instanceof TimestampNTZType) {
      return FeaturePlan.Kind.TIMESTAMP_NTZ;
    } else if (t instanceof StringType) {
      return FeaturePlan.Kind.STRING;
    }
    return null;
  }

  /**
   * Spark SQL for the days or microseconds since the epoch of date or timestamp column {@code q}
   * (quoted), whose mean is {@link Column#meanEpoch}.
   */
  static String epochSql(FeaturePlan.Kind kind, String q) {
    switch (kind) {
      case DATE:
        return "unix_date(" + q + ")";
      case TIMESTAMP:
        return "unix_micros(" + q + ")";
      case TIMESTAMP_NTZ: // unix_micros takes zoned timestamps only; this difference is zone-free
        return "timestampdiff(MICROSECOND, TIMESTAMP_NTZ'1970-01-01 00:00:00', " + q + ")";
      default:
        throw new AssertionError(kind);
    }
  }

  /** The type of a column's {@code imputed} feature. */
  static DataType imputedType(FeaturePlan.Kind kind) {
    switch (kind) {
      case NUMERIC:
        return DataTypes.DoubleType;
      case DATE:
        return DataTypes.DateType;
      case TIMESTAMP:
        return DataTypes.TimestampType;
      case TIMESTAMP_NTZ:
        return DataTypes.TimestampNTZType;
      case STRING:
        return DataTypes.StringType;
      default:
        throw new AssertionError(kind);
    }
  }
}
