package dev.overlap.executor.sql;

import java.io.Serializable;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Add;
import org.apache.spark.sql.catalyst.expressions.EvalMode;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction;
import org.apache.spark.sql.catalyst.expressions.aggregate.Average;
import org.apache.spark.sql.catalyst.expressions.aggregate.Count;
import org.apache.spark.sql.catalyst.expressions.aggregate.Max;
import org.apache.spark.sql.catalyst.expressions.aggregate.Min;
import org.apache.spark.sql.catalyst.expressions.aggregate.Partial$;
import org.apache.spark.sql.catalyst.expressions.aggregate.Sum;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.LongType;
import scala.jdk.javaapi.CollectionConverters;

/**
 * One partial aggregate the GPU computes ({@link GpuAggregates}), in the buffer Spark's final
 * aggregate merges: its kind, the expression it aggregates and its buffer's types, as Spark's own
 * function declares them.
 *
 * @param kind what is computed
 * @param child the aggregated expression; null for a count of rows
 * @param buffer the types of the function's buffer columns, in order
 * @param ansi whether a long sum fails on overflow (Spark's ANSI mode) rather than wrapping
 */
record AggSpec(Kind kind, Expression child, List<DataType> buffer, boolean ansi)
    implements Serializable {

  /** The kinds built. */
  enum Kind {
    COUNT_ROWS,
    COUNT,
    SUM_DECIMAL,
    SUM_LONG,
    SUM_DOUBLE,
    AVG_DECIMAL,
    AVG_DOUBLE,
    MIN,
    MAX
  }

  /** The result: a spec, or why the aggregate is left to Spark. */
  record Compiled(AggSpec spec, String why) {}

  static Compiled of(AggregateExpression ae) {
    if (ae.mode() != Partial$.MODULE$ || ae.isDistinct() || ae.filter().isDefined()) {
      return no(ae, "a DISTINCT or FILTER aggregate, or one not in partial mode");
    }
    AggregateFunction f = ae.aggregateFunction();
    List<DataType> buffer =
        CollectionConverters.asJava(f.aggBufferAttributes()).stream()
            .map(a -> a.dataType())
            .toList();
    List<Expression> children = CollectionConverters.asJava(f.children());
    if (f instanceof Count) {
      if (children.stream().allMatch(c -> c instanceof Literal l && l.value() != null)) {
        return yes(Kind.COUNT_ROWS, null, buffer, false);
      }
      return children.size() == 1
          ? child(Kind.COUNT, children.get(0), buffer, false, ae)
          : no(ae, "count of several expressions is not built yet");
    }
    if (children.size() != 1) {
      return no(ae, "an aggregate of several expressions");
    }
    Expression c = children.get(0);
    DataType t = c.dataType();
    if (f instanceof Sum s) {
      if (t instanceof DecimalType) {
        return child(Kind.SUM_DECIMAL, c, buffer, true, ae);
      }
      boolean ansi = ansi(s);
      // Under ANSI a partition's bigint sum could overflow in Spark's order of adding and not in
      // another; narrower integers cannot, in a partition of under 2^32 rows.
      if (Supported.integral(t) && !(t instanceof LongType && ansi)) {
        return child(Kind.SUM_LONG, c, buffer, ansi, ae);
      }
      return no(
          ae,
          "sum of "
              + t.simpleString()
              + (t instanceof LongType
                  ? " under ANSI (an overflow depends on the order of adding) is not built yet"
                  : " (floating-point sums depend on the order of adding, which the GPU does not"
                      + " keep)"));
    }
    if (f instanceof Average) {
      if (t instanceof DecimalType) {
        return child(Kind.AVG_DECIMAL, c, buffer, true, ae);
      }
      // Spark adds in double: exact in any order while every running sum is under 2^53, which
      // tinyint and smallint values cannot pass in a partition of under 2^37 rows.
      if (buffer.get(0) instanceof DoubleType
          && (t instanceof org.apache.spark.sql.types.ByteType
              || t instanceof org.apache.spark.sql.types.ShortType)) {
        return child(Kind.AVG_DOUBLE, c, buffer, false, ae);
      }
      return no(
          ae,
          "avg of "
              + t.simpleString()
              + " (Spark sums in double, whose rounding depends on the order of adding)");
    }
    if (f instanceof Min || f instanceof Max) {
      if (Supported.floating(t)) {
        return no(ae, "min and max of floating-point values (Spark's NaN order) not built yet");
      }
      return child(f instanceof Min ? Kind.MIN : Kind.MAX, c, buffer, false, ae);
    }
    return no(ae, "aggregate " + f.prettyName() + " is not built yet");
  }

  /**
   * The largest absolute value a running sum of this aggregate may reach and still be exact in any
   * order of adding: past it Spark's own partial, adding row by row, could overflow (a bigint sum
   * under ANSI, a decimal sum with fewer than 10 digits above its input's), or a sum of doubles
   * could round; null when no order of adding can matter (a bigint sum that wraps, a decimal sum
   * with room for 10^10 rows of any value).
   */
  java.math.BigInteger runningBound() {
    if (kind != Kind.SUM_DECIMAL && kind != Kind.AVG_DECIMAL) {
      return null;
    }
    int in = ((DecimalType) child.dataType()).precision();
    int sum = ((DecimalType) buffer.get(0)).precision();
    return sum - in >= 10 ? null : java.math.BigInteger.TEN.pow(sum);
  }

  /** Whether a long sum's update adds with ANSI's overflow check. */
  private static boolean ansi(Sum s) {
    for (Expression u : CollectionConverters.asJava(s.updateExpressions())) {
      boolean[] found = {false};
      u.foreach(
          e -> {
            if (e instanceof Add a && a.evalMode() == EvalMode.ANSI()) {
              found[0] = true;
            }
            return scala.runtime.BoxedUnit.UNIT;
          });
      if (found[0]) {
        return true;
      }
    }
    return false;
  }

  private static Compiled child(
      Kind k, Expression c, List<DataType> buffer, boolean ansi, AggregateExpression ae) {
    String why = Supported.why(c);
    return why != null ? no(ae, why) : yes(k, c, buffer, ansi);
  }

  private static Compiled yes(Kind k, Expression c, List<DataType> buffer, boolean ansi) {
    return new Compiled(new AggSpec(k, c, buffer, ansi), null);
  }

  private static Compiled no(AggregateExpression ae, String why) {
    return new Compiled(null, ae.sql() + ": " + why);
  }
}
