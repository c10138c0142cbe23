package dev.overlap.executor.sql;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.BinaryOperable;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.Scalar;
import dev.overlap.executor.api.CpuInstead;
import java.math.BigInteger;
import org.apache.spark.sql.catalyst.expressions.Expression;
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
      BigInteger ma =
          maxAbs(a).multiply(BigInteger.TEN.pow(op == BinaryOp.MUL ? 0 : scale - lt.scale()));
      BigInteger mb =
          maxAbs(b).multiply(BigInteger.TEN.pow(op == BinaryOp.MUL ? 0 : scale - rt.scale()));
      BigInteger bound = op == BinaryOp.MUL ? ma.multiply(mb) : ma.add(mb);
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
