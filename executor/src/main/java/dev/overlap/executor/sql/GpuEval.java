package dev.overlap.executor.sql;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.BinaryOperable;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.Scalar;
import dev.overlap.executor.resource.Closing;
import dev.overlap.executor.types.ColumnType;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.expressions.Add;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.BinaryArithmetic;
import org.apache.spark.sql.catalyst.expressions.BinaryComparison;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.EqualNullSafe;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.In;
import org.apache.spark.sql.catalyst.expressions.IsNotNull;
import org.apache.spark.sql.catalyst.expressions.IsNull;
import org.apache.spark.sql.catalyst.expressions.KnownNotNull;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Multiply;
import org.apache.spark.sql.catalyst.expressions.Not;
import org.apache.spark.sql.catalyst.expressions.Or;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Evaluates the expressions {@link Supported} accepts over one batch's columns on the GPU, as Spark
 * evaluates them row by row: three-valued logic, Spark's decimal types (exact, each result in the
 * expression's own type, {@link DecimalMath}), Java's integer and floating-point arithmetic. Every
 * column and scalar it makes is its own and closed with it; a result handed out stays valid until
 * then. Runs on a compute thread.
 */
final class GpuEval implements AutoCloseable {
  private final Map<ExprId, ColumnVector> env;
  private final int rows;
  private final List<AutoCloseable> owned = new ArrayList<>();
  // Results by canonical expression, owned through {@link #owned}.
  private final Map<Expression, BinaryOperable> computed = new java.util.HashMap<>();
  // Bounds on decimal values' unscaled magnitudes in this batch, by canonical expression.
  private final Map<Expression, BigInteger> bounds = new java.util.HashMap<>();

  /**
   * @param env the columns each attribute names, borrowed
   * @param rows the batch's rows
   */
  GpuEval(Map<ExprId, ColumnVector> env, int rows) {
    this.env = env;
    this.rows = rows;
  }

  int rows() {
    return rows;
  }

  /** {@code e} as a column of the batch's rows, owned by this. */
  ColumnVector column(Expression e) {
    BinaryOperable v = eval(e);
    if (v instanceof Scalar s) {
      return own(ColumnVector.fromScalar(s, rows));
    }
    return (ColumnVector) v;
  }

  /** Takes {@code c} into this evaluation's keeping. */
  <T extends AutoCloseable> T own(T c) {
    owned.add(c);
    return c;
  }

  /**
   * {@code e}'s value: a column, or a scalar for a literal. A subexpression that recurs (Q1's
   * discounted price, say) is computed once per batch.
   */
  BinaryOperable eval(Expression e) {
    if (e instanceof Attribute || e instanceof Literal) {
      return compute(e);
    }
    Expression key = e.canonicalized();
    BinaryOperable done = computed.get(key);
    if (done == null) {
      done = compute(e);
      computed.put(key, done);
    }
    return done;
  }

  /**
   * A bound on the absolute unscaled value of decimal {@code e} in this batch ({@link
   * DecimalMath#bound}), computed once per batch.
   */
  BigInteger bound(Expression e) {
    Expression key = e.canonicalized();
    BigInteger b = bounds.get(key);
    if (b == null) {
      b = DecimalMath.bound(this, e);
      bounds.put(key, b);
    }
    return b;
  }

  private BinaryOperable compute(Expression e) {
    if (e instanceof Attribute a) {
      ColumnVector c = env.get(a.exprId());
      if (c == null) {
        throw new IllegalStateException("no column for " + a);
      }
      return c;
    }
    if (e instanceof KnownNotNull k) {
      return eval(k.child());
    }
    if (e instanceof Literal l) {
      return own(scalar(l.value(), l.dataType()));
    }
    if (e instanceof And a) {
      return logical(BinaryOp.NULL_LOGICAL_AND, a.left(), a.right());
    }
    if (e instanceof Or o) {
      return logical(BinaryOp.NULL_LOGICAL_OR, o.left(), o.right());
    }
    if (e instanceof Not n) {
      return own(column(n.child()).not());
    }
    if (e instanceof IsNull n) {
      return own(column(n.child()).isNull());
    }
    if (e instanceof IsNotNull n) {
      return own(column(n.child()).isNotNull());
    }
    if (e instanceof BinaryComparison c) {
      return compare(c);
    }
    if (e instanceof In in) {
      return in(in);
    }
    // Before arithmetic: division is one of the functions.
    if (GpuFunctions.handles(e)) {
      return GpuFunctions.eval(this, e);
    }
    if (e instanceof BinaryArithmetic a) {
      return arithmetic(a);
    }
    if (e instanceof Cast c) {
      return own(column(c.child()).castTo(dtype(c.dataType())));
    }
    throw new IllegalStateException("not evaluated on the GPU: " + e.sql());
  }

  private ColumnVector logical(BinaryOp op, Expression l, Expression r) {
    return own(column(l).binaryOp(op, eval(r), DType.BOOL8));
  }

  private ColumnVector compare(BinaryComparison c) {
    BinaryOp op =
        c instanceof EqualNullSafe
            ? BinaryOp.NULL_EQUALS
            : switch (c.symbol()) {
              case "=" -> BinaryOp.EQUAL;
              case "<" -> BinaryOp.LESS;
              case "<=" -> BinaryOp.LESS_EQUAL;
              case ">" -> BinaryOp.GREATER;
              case ">=" -> BinaryOp.GREATER_EQUAL;
              default -> throw new IllegalStateException("comparison " + c.symbol());
            };
    if (Supported.floating(c.left().dataType())) {
      return FloatingPoint.compare(this, op, c.left(), c.right());
    }
    return binary(op, c.left(), c.right(), DType.BOOL8);
  }

  /** {@code l op r} with a column on the left, a literal on either side. */
  ColumnVector binary(BinaryOp op, Expression l, Expression r, DType out) {
    BinaryOperable left = eval(l);
    BinaryOperable right = eval(r);
    if (left instanceof Scalar s) {
      if (right instanceof Scalar) {
        right = column(r);
      }
      return own(s.binaryOp(op, right, out));
    }
    return own(((ColumnVector) left).binaryOp(op, right, out));
  }

  private ColumnVector in(In in) {
    ColumnVector value = column(in.value());
    ColumnVector acc = null;
    boolean floating = Supported.floating(in.value().dataType());
    for (Expression x : CollectionConverters.asJava(in.list())) {
      ColumnVector eq =
          floating
              ? FloatingPoint.compare(this, BinaryOp.EQUAL, in.value(), x)
              : own(value.binaryOp(BinaryOp.EQUAL, eval(x), DType.BOOL8));
      acc = acc == null ? eq : own(acc.binaryOp(BinaryOp.NULL_LOGICAL_OR, eq, DType.BOOL8));
    }
    if (acc == null) {
      throw new IllegalStateException("IN with no values");
    }
    return acc;
  }

  private BinaryOperable arithmetic(BinaryArithmetic a) {
    BinaryOp op =
        a instanceof Add ? BinaryOp.ADD : a instanceof Multiply ? BinaryOp.MUL : BinaryOp.SUB;
    if (a.dataType() instanceof DecimalType d) {
      return DecimalMath.apply(this, op, a.left(), a.right(), d, a.sql());
    }
    return binary(op, a.left(), a.right(), dtype(a.dataType()));
  }

  /** The cuDF type of a column of Spark type {@code t}. */
  static DType dtype(DataType t) {
    return ColumnType.dtypeOf(t);
  }

  /** A literal as a cuDF scalar of its column's type. */
  static Scalar scalar(Object v, DataType t) {
    DType d = dtype(t);
    if (v == null) {
      return Scalar.fromNull(d);
    }
    if (t instanceof DecimalType) {
      // At the type's scale: a Decimal may hold its value at another.
      BigInteger unscaled =
          ((Decimal) v)
              .toJavaBigDecimal()
              .setScale(((DecimalType) t).scale(), java.math.RoundingMode.UNNECESSARY)
              .unscaledValue();
      return Scalar.fromDecimal(unscaled, d);
    }
    return switch (d.getTypeId()) {
      case BOOL8 -> Scalar.fromBool((Boolean) v);
      case INT8 -> Scalar.fromByte((Byte) v);
      case INT16 -> Scalar.fromShort((Short) v);
      case INT32 -> Scalar.fromInt((Integer) v);
      case INT64 -> Scalar.fromLong((Long) v);
      case FLOAT32 -> Scalar.fromFloat((Float) v);
      case FLOAT64 -> Scalar.fromDouble((Double) v);
      case TIMESTAMP_DAYS -> Scalar.timestampDaysFromInt((Integer) v);
      case TIMESTAMP_MICROSECONDS -> Scalar.timestampFromLong(d, (Long) v);
      // Spark's bytes as they are, valid UTF-8 or not.
      case STRING ->
          Scalar.fromUTF8String(((org.apache.spark.unsafe.types.UTF8String) v).getBytes());
      default -> throw new IllegalStateException("literal of " + t.simpleString());
    };
  }

  @Override
  public void close() {
    // The last made first: a result may hold what it was made of.
    List<AutoCloseable> last = new ArrayList<>(owned);
    java.util.Collections.reverse(last);
    owned.clear();
    computed.clear();
    bounds.clear();
    Closing.all(last);
  }
}
