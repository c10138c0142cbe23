package dev.overlap.jobs;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampType;

/**
 * What the features job derives from each input column, with the statistics of the first pass.
 * Shared by the GPU kernel and its CPU implementation so both compute the same function.
 */
final class FeaturePlan implements Serializable {
  enum Kind {
    NUMERIC,
    DATE,
    TIMESTAMP,
    STRING
  }

  /** One input column and what is known about it. */
  static final class Column implements Serializable {
    final String name;
    final Kind kind;

    /**
     * Whether the column gets {@code isnull} and {@code imputed} features: declared nullable, or a
     * float or double column (whose NaN and infinities count as missing, whatever the schema says).
     */
    final boolean nullable;

    /** A float or double column: NaN, +Infinity and -Infinity are treated as missing, as null. */
    final boolean floating;

    /**
     * The mean, the sample standard deviation and whether the minimum is non-negative, over the
     * present values: nulls, NaN and infinities left out.
     */
    double mean;

    double std;
    boolean nonNegative;
    List<String> vocabulary = List.of();

    /**
     * What a null becomes in the {@code imputed} column of a date or timestamp: the mean, in days
     * or microseconds since 1970-01-01 (UTC), rounded; 0 when every value is null.
     */
    long meanEpoch;

    /**
     * What a null becomes in the {@code imputed} column of a string: its most frequent value (ties
     * by value); the empty string when every value is null.
     */
    String mode = "";

    /** How many NaN and infinite values the first pass found (float and double columns). */
    long nonFinite;

    Column(String name, Kind kind, boolean nullable, boolean floating) {
      this.name = name;
      this.kind = kind;
      this.nullable = nullable || floating;
      this.floating = floating;
    }
  }

  final List<Column> columns = new ArrayList<>();
  final List<String> unsupported = new ArrayList<>();
  final int vocabularySize;

  /** When set, the kernel's last input column is a row id it passes through unchanged. */
  boolean carriesRowId;

  FeaturePlan(StructType schema, int vocabularySize) {
    this.vocabularySize = vocabularySize;
    for (StructField f : schema.fields()) {
      Kind k = kindOf(f.dataType());
      if (k == null) {
        unsupported.add(f.name() + " (" + f.dataType().simpleString() + ")");
      } else {
        boolean floating = f.dataType() instanceof DoubleType || f.dataType() instanceof FloatType;
        columns.add(new Column(f.name(), k, f.nullable(), floating));
      }
    }
  }

  /** The number of NaN and infinite values found in the first pass, over every column. */
  long nonFiniteCount() {
    return columns.stream().mapToLong(c -> c.nonFinite).sum();
  }

  /** The columns holding NaN or infinite values, comma-separated. */
  String nonFiniteColumns() {
    return String.join(
        ", ", columns.stream().filter(c -> c.nonFinite > 0).map(c -> c.name).toList());
  }

  static Kind kindOf(DataType t) {
    if (t instanceof BooleanType) {
      return null;
    } else if (t instanceof NumericType || t instanceof DecimalType) {
      return Kind.NUMERIC;
    } else if (t instanceof DateType) {
      return Kind.DATE;
    } else if (t instanceof TimestampType) {
      return Kind.TIMESTAMP;
    } else if (t instanceof StringType) {
      return Kind.STRING;
    }
    return null;
  }

  /** The type of a column's {@code imputed} feature. */
  static DataType imputedType(Kind kind) {
    switch (kind) {
      case NUMERIC:
        return DataTypes.DoubleType;
      case DATE:
        return DataTypes.DateType;
      case TIMESTAMP:
        return DataTypes.TimestampType;
      case STRING:
        return DataTypes.StringType;
      default:
        throw new AssertionError(kind);
    }
  }

  /** The kernel's input columns: the supported ones, in input order. */
  String[] inputColumns() {
    return columns.stream().map(c -> c.name).toArray(String[]::new);
  }

  /** The output schema; {@link FeatureKernel} and its CPU implementation produce these columns. */
  StructType outputSchema() {
    StructType s = new StructType();
    for (Column c : columns) {
      switch (c.kind) {
        case NUMERIC:
          s = s.add(c.name + "_std", DataTypes.DoubleType, false);
          if (c.nonNegative) {
            s = s.add(c.name + "_log1p", DataTypes.DoubleType, false);
          }
          break;
        case TIMESTAMP:
          s = s.add(c.name + "_hour", DataTypes.IntegerType);
          s = s.add(c.name + "_dow", DataTypes.IntegerType);
          s = s.add(c.name + "_month", DataTypes.IntegerType);
          break;
        case DATE:
          s = s.add(c.name + "_dow", DataTypes.IntegerType);
          s = s.add(c.name + "_month", DataTypes.IntegerType);
          break;
        case STRING:
          s = s.add(c.name + "_idx", DataTypes.IntegerType, false);
          break;
        default:
          throw new AssertionError(c.kind);
      }
      if (c.nullable) {
        s = s.add(c.name + "_isnull", DataTypes.BooleanType, false);
        s = s.add(c.name + "_imputed", imputedType(c.kind), false);
      }
    }
    return carriesRowId ? s.add(FeaturesJob.ROW_ID, DataTypes.LongType, false) : s;
  }
}
