package dev.overlap.executor.sql;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.BinaryOperable;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.Scalar;
import dev.overlap.executor.api.CpuInstead;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Abs;
import org.apache.spark.sql.catalyst.expressions.CaseWhen;
import org.apache.spark.sql.catalyst.expressions.Coalesce;
import org.apache.spark.sql.catalyst.expressions.Contains;
import org.apache.spark.sql.catalyst.expressions.DateAdd;
import org.apache.spark.sql.catalyst.expressions.DateSub;
import org.apache.spark.sql.catalyst.expressions.DayOfMonth;
import org.apache.spark.sql.catalyst.expressions.DayOfWeek;
import org.apache.spark.sql.catalyst.expressions.Divide;
import org.apache.spark.sql.catalyst.expressions.EndsWith;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Month;
import org.apache.spark.sql.catalyst.expressions.StartsWith;
import org.apache.spark.sql.catalyst.expressions.StringPredicate;
import org.apache.spark.sql.catalyst.expressions.UnaryMinus;
import org.apache.spark.sql.catalyst.expressions.Year;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark's functions the GPU evaluates besides logic, comparisons and arithmetic ({@link GpuEval}):
 * each one's planning rule ({@link #why}) beside its evaluation ({@link #eval}), so that what is
 * taken and how it is computed are read together.
 *
 * <ul>
 *   <li>{@code CASE WHEN}, {@code IF}, {@code COALESCE}: every branch is computed on every row (a
 *       branch that could fail is not taken, see {@link Supported}), a null condition is not true;
 *   <li>{@code -x} and {@code abs(x)}: decimals and floating types, and integers where Spark wraps
 *       (ANSI off); {@code -0.0} as Java gives it;
 *   <li>{@code startswith}, {@code endswith}, {@code contains}, and so {@code LIKE} with a literal
 *       prefix, suffix or infix (Spark's optimizer turns those into these): byte for byte;
 *   <li>{@code year}, {@code month}, {@code dayofmonth}, {@code dayofweek} of a date (the proleptic
 *       Gregorian calendar, as Spark's), {@code date_add} and {@code date_sub} (days added as Java
 *       adds ints, as Spark does).
 * </ul>
 */
final class GpuFunctions {
  private GpuFunctions() {}

  /** Whether {@code e} is one of the functions here. */
  static boolean handles(Expression e) {
    return e instanceof CaseWhen
        || e instanceof If
        || e instanceof Coalesce
        || e instanceof UnaryMinus
        || e instanceof Abs
        || e instanceof StartsWith
        || e instanceof EndsWith
        || e instanceof Contains
        || e instanceof Year
        || e instanceof Month
        || e instanceof DayOfMonth
        || e instanceof DayOfWeek
        || e instanceof DateAdd
        || e instanceof DateSub
        || e instanceof Divide;
  }

  /** Why {@code e} (one {@link #handles} takes) is not evaluated, its children aside; or null. */
  static String why(Expression e) {
    DataType t = e.dataType();
    if (e instanceof CaseWhen || e instanceof If || e instanceof Coalesce) {
      for (Expression c : values(e)) {
        if (!c.dataType().equals(t)) {
          return "branches of two types";
        }
      }
      return null;
    }
    if (e instanceof UnaryMinus m) {
      return overflows(t, m.failOnError());
    }
    if (e instanceof Divide) {
      return t instanceof DoubleType
          ? null
          : "division of " + t.simpleString() + " is not built yet";
    }
    if (e instanceof Abs a) {
      return overflows(t, a.failOnError());
    }
    if (e instanceof StringPredicate p) {
      return p.right() instanceof Literal l
              && l.value() != null
              && DataTypes.StringType.equals(p.left().dataType())
          ? null
          : "a string match against anything but a literal of the default collation";
    }
    // Dates: each child is a date or an integral day count, as Spark's types require.
    return CollectionConverters.asJava(e.children()).get(0).dataType() instanceof DateType
        ? null
        : "a date function of " + e.children().head().dataType().simpleString();
  }

  /** Integer negation and abs overflow at the type's minimum: Spark fails there under ANSI. */
  private static String overflows(DataType t, boolean failOnError) {
    if (Supported.integral(t) && failOnError) {
      return "integer negation with an overflow check (spark.sql.ansi.enabled) is not built yet";
    }
    return t instanceof DecimalType || Supported.floating(t) || Supported.integral(t)
        ? null
        : "of " + t.simpleString();
  }

  /** The values a conditional chooses among. */
  private static List<Expression> values(Expression e) {
    if (e instanceof If i) {
      return List.of(i.trueValue(), i.falseValue());
    }
    if (e instanceof Coalesce c) {
      return CollectionConverters.asJava(c.children());
    }
    CaseWhen w = (CaseWhen) e;
    List<Expression> out = new java.util.ArrayList<>();
    for (Tuple2<Expression, Expression> b : CollectionConverters.asJava(w.branches())) {
      out.add(b._2());
    }
    if (w.elseValue().isDefined()) {
      out.add(w.elseValue().get());
    }
    return out;
  }

  /** {@code e}'s value over the batch of {@code g}, owned by {@code g}. */
  static BinaryOperable eval(GpuEval g, Expression e) {
    DType out = GpuEval.dtype(e.dataType());
    if (e instanceof If i) {
      return choose(g, i.predicate(), g.eval(i.trueValue()), g.eval(i.falseValue()));
    }
    if (e instanceof CaseWhen w) {
      // From the last branch back: the first whose condition is true wins.
      BinaryOperable acc =
          w.elseValue().isDefined() ? g.eval(w.elseValue().get()) : g.own(Scalar.fromNull(out));
      List<Tuple2<Expression, Expression>> branches = CollectionConverters.asJava(w.branches());
      for (int b = branches.size() - 1; b >= 0; b--) {
        acc = choose(g, branches.get(b)._1(), g.eval(branches.get(b)._2()), acc);
      }
      return acc;
    }
    if (e instanceof Coalesce c) {
      List<Expression> kids = CollectionConverters.asJava(c.children());
      ColumnVector acc = g.column(kids.get(0));
      for (Expression k : kids.subList(1, kids.size())) {
        BinaryOperable v = g.eval(k);
        acc =
            g.own(v instanceof Scalar s ? acc.replaceNulls(s) : acc.replaceNulls((ColumnVector) v));
      }
      return acc;
    }
    if (e instanceof UnaryMinus m) {
      return negate(g, m.child(), out);
    }
    if (e instanceof Divide d) {
      return FloatingPoint.divide(g, d);
    }
    if (e instanceof Abs a) {
      return g.own(g.column(a.child()).abs());
    }
    if (e instanceof StartsWith s) {
      return g.own(g.column(s.left()).startsWith((Scalar) g.eval(s.right())));
    }
    if (e instanceof EndsWith s) {
      return g.own(g.column(s.left()).endsWith((Scalar) g.eval(s.right())));
    }
    if (e instanceof Contains s) {
      return g.own(g.column(s.left()).stringContains((Scalar) g.eval(s.right())));
    }
    if (e instanceof DateAdd d) {
      return days(g, d.startDate(), d.days(), BinaryOp.ADD);
    }
    if (e instanceof DateSub d) {
      return days(g, d.startDate(), d.days(), BinaryOp.SUB);
    }
    ColumnVector date = g.column(e.children().head());
    inCalendar(g, date, e);
    ColumnVector part =
        g.own(
            e instanceof Year
                ? date.year()
                : e instanceof Month
                    ? date.month()
                    : e instanceof DayOfMonth ? date.day() : date.weekDay());
    if (e instanceof DayOfWeek) {
      // cuDF counts Monday as 1 and Sunday as 7; Spark Sunday as 1 and Saturday as 7.
      try (Scalar seven = Scalar.fromShort((short) 7);
          Scalar one = Scalar.fromShort((short) 1)) {
        ColumnVector mod = g.own(part.binaryOp(BinaryOp.PMOD, seven, DType.INT16));
        part = g.own(mod.binaryOp(BinaryOp.ADD, one, DType.INT16));
      }
    }
    return g.own(part.castTo(DType.INT32));
  }

  /** The days of 0001-01-01 and 9999-12-31: cuDF's calendar holds years up to 32767 only. */
  private static final int FIRST_DAY = -719162;

  private static final int LAST_DAY = 2932896;

  /** Sends a batch with a date outside years 1 to 9999 to the CPU ({@link CpuInstead}). */
  private static void inCalendar(GpuEval g, ColumnVector date, Expression e) {
    ColumnVector days = g.own(date.castTo(DType.INT32));
    try (Scalar lo = days.min();
        Scalar hi = days.max()) {
      if (lo.isValid() && (lo.getInt() < FIRST_DAY || hi.getInt() > LAST_DAY)) {
        throw new CpuInstead(e.sql() + " of a date outside years 1 to 9999 in this batch");
      }
    }
  }

  /** Where {@code condition} is true {@code yes}, elsewhere (null included) {@code no}. */
  private static BinaryOperable choose(
      GpuEval g, Expression condition, BinaryOperable yes, BinaryOperable no) {
    ColumnVector c = g.column(condition);
    if (c.getNullCount() > 0) {
      try (Scalar f = Scalar.fromBool(false)) {
        c = g.own(c.replaceNulls(f));
      }
    }
    if (yes instanceof Scalar y) {
      return g.own(no instanceof Scalar n ? c.ifElse(y, n) : c.ifElse(y, (ColumnVector) no));
    }
    ColumnVector y = (ColumnVector) yes;
    return g.own(no instanceof Scalar n ? c.ifElse(y, n) : c.ifElse(y, (ColumnVector) no));
  }

  /**
   * {@code -x}: {@code 0 - x} for decimals and integers (wrapping as Java's ints do), {@code -1 *
   * x} for floating types, which keeps Java's {@code -0.0} and NaN.
   */
  private static ColumnVector negate(GpuEval g, Expression child, DType out) {
    ColumnVector x = g.column(child);
    if (Supported.floating(child.dataType())) {
      try (Scalar minusOne =
          out.equals(DType.FLOAT32) ? Scalar.fromFloat(-1f) : Scalar.fromDouble(-1d)) {
        return g.own(x.binaryOp(BinaryOp.MUL, minusOne, out));
      }
    }
    try (Scalar zero = GpuEval.scalar(zeroOf(child.dataType()), child.dataType())) {
      return g.own(zero.binaryOp(BinaryOp.SUB, x, out));
    }
  }

  /** Zero as Spark holds a value of {@code t} (integral or decimal). */
  private static Object zeroOf(DataType t) {
    if (t instanceof DecimalType) {
      return org.apache.spark.sql.types.Decimal.apply(0);
    }
    return switch (t.typeName()) {
      case "byte" -> (byte) 0;
      case "short" -> (short) 0;
      case "integer" -> 0;
      default -> 0L;
    };
  }

  /** A date plus or minus a count of days, as Java adds ints. */
  private static ColumnVector days(GpuEval g, Expression date, Expression n, BinaryOp op) {
    ColumnVector d = g.own(g.column(date).castTo(DType.INT32));
    ColumnVector k = g.column(n);
    if (!k.getType().equals(DType.INT32)) {
      k = g.own(k.castTo(DType.INT32));
    }
    ColumnVector sum = g.own(d.binaryOp(op, k, DType.INT32));
    return g.own(sum.castTo(DType.TIMESTAMP_DAYS));
  }
}
