package dev.overlap.jobs.etl;

import java.io.Serializable;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;

/**
 * The type of a money value as etl computes it ({@link EtlShape}); {@code scale} only for {@link
 * Kind#EXACT}.
 */
record MoneyType(MoneyType.Kind kind, int scale) implements Serializable {
  /** How a value is computed. */
  enum Kind {
    /** A decimal, or an int or long (scale 0): exact, with the scale Spark gives it. */
    EXACT,
    FLOAT,
    DOUBLE
  }

  static MoneyType of(DataType t) {
    if (t instanceof DecimalType d) {
      return new MoneyType(Kind.EXACT, d.scale());
    } else if (t instanceof IntegerType || t instanceof LongType) {
      return new MoneyType(Kind.EXACT, 0);
    } else if (t instanceof FloatType) {
      return new MoneyType(Kind.FLOAT, 0);
    } else if (t instanceof DoubleType) {
      return new MoneyType(Kind.DOUBLE, 0);
    }
    throw new IllegalStateException("no money type: " + t.simpleString());
  }

  /**
   * The type of a partial sum in a kernel's output: decimal(38,s) for exact values (Spark casts the
   * total to its own sum type at the end), double for floating ones (Spark sums floats as doubles).
   */
  DataType partialType() {
    return kind == Kind.EXACT
        ? DataTypes.createDecimalType(38, scale)
        : (DataType) DataTypes.DoubleType;
  }
}
