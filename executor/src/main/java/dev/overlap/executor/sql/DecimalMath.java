package dev.overlap.executor.sql;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.BinaryOperable;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.Scalar;
import dev.overlap.executor.api.CpuInstead;
import java.math.BigInteger;
import org.apache.spark.sql.catalyst.expressions.Add;
import org.apache.spark.sql.catalyst.expressions.BinaryArithmetic;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.KnownNotNull;
import org.apache.spark.sql.catalyst.expressions.Multiply;
import org.apache.spark.sql.catalyst.expressions.Subtract;
import org.apache.spark.sql.types.DecimalType;

/**
 * Spark's decimal {@code + - *} on the GPU, exact: in 128-bit integers at the result's scale (which
 * {@link Supported} checked is the exact one, so nothing rounds), then in the result type's
 * storage. Spark's result type has room for every value of its operands' types unless its precision
 * was capped at 38; then the batch's own largest values are checked before the arithmetic, and a
 * batch whose result could pass the cap goes to the CPU ({@link CpuInstead}), where Spark's own
 * overflow rules (an error, or null with ANSI off) apply.
 */
final class DecimalMath {
  private DecimalMath() {}

  static ColumnVector apply(
      GpuEval g, BinaryOp op, Expression l, Expression r, DecimalType out, String sql) {
    DecimalType lt = (DecimalType) l.dataType();
    DecimalType rt = (DecimalType) r.dataType();
    BinaryOperable a = wide(g, g.eval(l), lt);
    BinaryOperable b = wide(g, g.eval(r), rt);
    int scale = out.scale();
    if (!fitsByTypes(op, lt, rt, out)) {
      BigInteger bound = combined(op, g.bound(l), lt, g.bound(r), rt, scale);
      if (bound.compareTo(BigInteger.TEN.pow(out.precision())) >= 0) {
        throw new CpuInstead(
            sql + " may pass decimal(" + out.precision() + ", " + scale + ") in this batch");
      }
    }
    DType wide = DType.create(DType.DTypeEnum.DECIMAL128, -scale);
    ColumnVector result;
    if (a instanceof Scalar s) {
      result = g.own(s.binaryOp(op, b instanceof Scalar ? wide(g, g.column(r), rt) : b, wide));
    } else {
      result = g.own(((ColumnVector) a).binaryOp(op, b, wide));
    }
    DType storage = GpuEval.dtype(out);
    return storage.equals(wide) ? result : g.own(result.castTo(storage));
  }

  /**
   * A bound on {@code |e|}'s unscaled values in the batch of {@code g}: carried through {@code + -
   * *} and widening casts from the bounds of the operands, so that only the batch's input columns
   * are reduced (their minimum and maximum, once per batch); other expressions are reduced
   * themselves. Never above the largest value of {@code e}'s type.
   */
  static BigInteger bound(GpuEval g, Expression e) {
    DecimalType t = (DecimalType) e.dataType();
    BigInteger b;
    if (e instanceof KnownNotNull k) {
      b = g.bound(k.child());
    } else if ((e instanceof Add || e instanceof Subtract || e instanceof Multiply)
        && e instanceof BinaryArithmetic a
        && a.left().dataType() instanceof DecimalType lt
        && a.right().dataType() instanceof DecimalType rt) {
      BinaryOp op = e instanceof Multiply ? BinaryOp.MUL : BinaryOp.ADD;
      b = combined(op, g.bound(a.left()), lt, g.bound(a.right()), rt, t.scale());
    } else if (e instanceof Cast c
        && c.child().dataType() instanceof DecimalType ct
        && ct.scale() <= t.scale()) {
      b = g.bound(c.child()).multiply(BigInteger.TEN.pow(t.scale() - ct.scale()));
    } else {
      b = maxAbs(g.eval(e));
    }
    return b.min(BigInteger.TEN.pow(t.precision()).subtract(BigInteger.ONE));
  }

  /**
   * The bound of {@code l op r} at {@code scale} from its operands' bounds: the product of the two,
   * or the sum of the two at the result's scale ({@code -} as {@code +}).
   */
  private static BigInteger combined(
      BinaryOp op, BigInteger l, DecimalType lt, BigInteger r, DecimalType rt, int scale) {
    if (op == BinaryOp.MUL) {
      return l.multiply(r);
    }
    return l.multiply(BigInteger.TEN.pow(scale - lt.scale()))
        .add(r.multiply(BigInteger.TEN.pow(scale - rt.scale())));
  }

  /**
   * Whether every pair of values of the operands' types gives a result within {@code out}'s
   * precision.
   */
  static boolean fitsByTypes(BinaryOp op, DecimalType l, DecimalType r, DecimalType out) {
    if (op == BinaryOp.MUL) {
      return l.precision() + r.precision() <= out.precision();
    }
    int digits = Math.max(l.precision() - l.scale(), r.precision() - r.scale()) + out.scale() + 1;
    return digits <= out.precision();
  }

  /** {@code v} in 128-bit storage at its own scale. */
  private static BinaryOperable wide(GpuEval g, BinaryOperable v, DecimalType t) {
    DType wide = DType.create(DType.DTypeEnum.DECIMAL128, -t.scale());
    if (v instanceof Scalar s) {
      if (s.getType().equals(wide)) {
        return s;
      }
      return g.own(
          s.isValid()
              ? Scalar.fromDecimal(s.getBigDecimal().unscaledValue(), wide)
              : Scalar.fromNull(wide));
    }
    ColumnVector c = (ColumnVector) v;
    return c.getType().equals(wide) ? c : g.own(c.castTo(wide));
  }

  /** The largest absolute unscaled value of a decimal column or scalar; 0 when all are null. */
  static BigInteger maxAbs(BinaryOperable v) {
    if (v instanceof Scalar s) {
      return s.isValid() ? s.getBigDecimal().unscaledValue().abs() : BigInteger.ZERO;
    }
    ColumnVector c = (ColumnVector) v;
    try (Scalar max = c.max();
        Scalar min = c.min()) {
      return maxAbs(max).max(maxAbs(min));
    }
  }
}
