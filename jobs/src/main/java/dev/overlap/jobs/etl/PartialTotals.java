package dev.overlap.jobs.etl;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.sum;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The kernels' partial aggregates added up on the driver: the kernels' stage runs as one action
 * that brings its few partial rows back (a few per batch), and their sums per group are computed
 * here, with no exchange and no second stage. The sums take the types Spark's {@code sum} gives the
 * partial columns (read from Spark's analysis of that aggregation, no job run): exact for decimals
 * (an overflow of the type fails as Spark's ANSI mode fails it), exact for longs, and in double for
 * doubles (equal up to the order of summation). Groups come out in Spark's order of the keys
 * (strings by their UTF-8 bytes, nulls first), as {@code orderBy} gives them.
 */
final class PartialTotals {
  private PartialTotals() {}

  /**
   * The totals of {@code partial}'s columns after its first {@code keys} ones, per distinct value
   * of those keys, as a local Dataset (a {@code LocalRelation}: collecting, showing or writing it
   * runs no job over the input) with the columns Spark's {@code groupBy(keys).agg(sum(c).as(c))}
   * would give, keys first. With no keys, one row: the totals of every partial row, null where
   * there was none or all were null. Runs {@code partial}: one Spark job.
   */
  static Dataset<Row> of(Dataset<Row> partial, int keys) {
    String[] names = partial.schema().fieldNames();
    List<Column> sums = new ArrayList<>();
    for (int i = keys; i < names.length; i++) {
      sums.add(sum(col(names[i])).as(names[i]));
    }
    Column[] groups = Arrays.stream(names, 0, keys).map(n -> col(n)).toArray(Column[]::new);
    StructType typed =
        partial
            .groupBy(groups)
            .agg(sums.get(0), sums.subList(1, sums.size()).toArray(Column[]::new))
            .schema(); // analysis only
    if (keys > 0) {
      // A group exists only where it has rows: a total of a column without nulls is never null.
      StructField[] f = typed.fields().clone();
      for (int i = keys; i < f.length; i++) {
        f[i] =
            partial.schema().fields()[i].nullable()
                ? f[i]
                : f[i].copy(f[i].name(), f[i].dataType(), false, f[i].metadata());
      }
      typed = new StructType(f);
    }
    Map<List<Object>, Object[]> totals = new LinkedHashMap<>();
    if (keys == 0) {
      totals.put(List.of(), new Object[names.length]);
    }
    for (Row r : partial.collectAsList()) {
      List<Object> key = new ArrayList<>(keys);
      for (int i = 0; i < keys; i++) {
        key.add(r.get(i));
      }
      Object[] t = totals.computeIfAbsent(key, k -> new Object[names.length]);
      for (int i = keys; i < names.length; i++) {
        t[i] = add(t[i], r.get(i), names[i]);
      }
    }
    List<Row> rows = new ArrayList<>(totals.size());
    for (Map.Entry<List<Object>, Object[]> e : totals.entrySet()) {
      Object[] v = e.getValue();
      for (int i = 0; i < keys; i++) {
        v[i] = e.getKey().get(i);
      }
      for (int i = keys; i < names.length; i++) {
        v[i] = fit(v[i], typed.fields()[i]);
      }
      rows.add(RowFactory.create(v));
    }
    rows.sort(inKeyOrder(keys));
    return partial.sparkSession().createDataFrame(rows, typed);
  }

  /** {@code total + value} as Spark's sum adds them: nulls skipped, longs checked for overflow. */
  private static Object add(Object total, Object value, String column) {
    if (value == null) {
      return total;
    }
    if (total == null) {
      return value;
    }
    if (value instanceof BigDecimal d) {
      return ((BigDecimal) total).add(d);
    }
    if (value instanceof Long l) {
      try {
        return Math.addExact((Long) total, l);
      } catch (ArithmeticException e) {
        throw new ArithmeticException("the sum of " + column + " overflows a long");
      }
    }
    if (value instanceof Double d) {
      return (Double) total + d;
    }
    throw new IllegalStateException(column + " is a " + value.getClass().getSimpleName());
  }

  /** A total in the type Spark's sum gives its column; a decimal that does not fit fails. */
  private static Object fit(Object total, StructField f) {
    DataType t = f.dataType();
    if (total == null) {
      return null;
    }
    if (t instanceof DecimalType d) {
      Decimal v = Decimal.apply((BigDecimal) total);
      if (!v.changePrecision(d.precision(), d.scale())) {
        throw new ArithmeticException(
            "the sum of " + f.name() + " (" + total + ") does not fit " + d.simpleString());
      }
      return v.toJavaBigDecimal();
    }
    if (t instanceof LongType || t instanceof DoubleType) {
      return total;
    }
    throw new IllegalStateException("a sum of type " + t.simpleString() + " for " + f.name());
  }

  /** Rows ordered by their first {@code keys} string columns, ascending, nulls first. */
  private static Comparator<Row> inKeyOrder(int keys) {
    Comparator<Row> order = (a, b) -> 0;
    for (int i = 0; i < keys; i++) {
      int k = i;
      Comparator<String> utf8 =
          Comparator.nullsFirst(
              (x, y) -> UTF8String.fromString(x).compareTo(UTF8String.fromString(y)));
      order = order.thenComparing(r -> r.getString(k), utf8);
    }
    return order;
  }
}
