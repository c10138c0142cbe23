package dev.overlap.features;

import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StringType;
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
