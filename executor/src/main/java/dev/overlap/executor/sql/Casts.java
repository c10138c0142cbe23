package dev.overlap.executor.sql;

import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;

/**
 * The casts the GPU does exactly as Spark does, in either ANSI setting: those that cannot fail or
 * round differently. Widening integers, integers and floats to a wider floating type (rounded to
 * nearest as Java does), integers to a decimal with room for every value, a decimal to one with at
 * least its scale and its integer digits.
 */
final class Casts {
  private Casts() {}

  /** Why a cast from {@code from} to {@code to} is not done on the GPU, or null. */
  static String why(DataType from, DataType to) {
    if (from.equals(to)) {
      return null;
    }
    int fromRank = rank(from);
    int toRank = rank(to);
    if (fromRank > 0 && toRank > fromRank) {
      return null;
    }
    if (fromRank > 0 && Supported.floating(to)) {
      return null;
    }
    if (from instanceof FloatType && to instanceof DoubleType) {
      return null;
    }
    if (fromRank > 0 && to instanceof DecimalType d && d.precision() - d.scale() >= digits(from)) {
      return null;
    }
    if (from instanceof DecimalType f
        && to instanceof DecimalType t
        && t.scale() >= f.scale()
        && t.precision() - t.scale() >= f.precision() - f.scale()) {
      return null;
    }
    return "a cast from " + from.simpleString() + " to " + to.simpleString() + " is not built yet";
  }

  /** An integral type's rank by width, 0 for any other. */
  private static int rank(DataType t) {
    if (t instanceof ByteType) {
      return 1;
    }
    if (t instanceof ShortType) {
      return 2;
    }
    if (t instanceof IntegerType) {
      return 3;
    }
    return t instanceof LongType ? 4 : 0;
  }

  /** The decimal digits the largest value of an integral type has. */
  private static int digits(DataType t) {
    return switch (rank(t)) {
      case 1 -> 3;
      case 2 -> 5;
      case 3 -> 10;
      default -> 19;
    };
  }
}
