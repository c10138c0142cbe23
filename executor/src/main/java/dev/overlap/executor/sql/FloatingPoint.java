package dev.overlap.executor.sql;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.Scalar;
import dev.overlap.executor.api.CpuInstead;
import org.apache.spark.sql.catalyst.expressions.Divide;
import org.apache.spark.sql.catalyst.expressions.Expression;

/**
 * Floating-point values as Spark treats them where the GPU's IEEE arithmetic differs: comparisons
 * (NaN equal to NaN and above every number) and division of doubles (null, or under ANSI Spark's
 * error, for a zero divisor). Used by {@link GpuEval} and {@link GpuFunctions}.
 */
final class FloatingPoint {
  private FloatingPoint() {}

  /**
   * {@code l op r} over floating-point values as Spark compares them: NaN equals NaN and is above
   * every other value, {@code -0.0} equals {@code 0.0}; null where either side is null, except for
   * {@code <=>}. The IEEE comparison, or-ed with what NaN changes.
   */
  static ColumnVector compare(GpuEval g, BinaryOp op, Expression l, Expression r) {
    ColumnVector a = g.column(l);
    ColumnVector b = g.column(r);
    ColumnVector ieee = g.own(a.binaryOp(op, b, DType.BOOL8));
    ColumnVector nanA = g.own(a.isNan());
    ColumnVector nanB = g.own(b.isNan());
    ColumnVector nan =
        switch (op) {
          case EQUAL, NULL_EQUALS -> g.own(nanA.binaryOp(BinaryOp.LOGICAL_AND, nanB, DType.BOOL8));
          case LESS -> g.own(g.own(nanA.not()).binaryOp(BinaryOp.LOGICAL_AND, nanB, DType.BOOL8));
          case LESS_EQUAL -> nanB;
          case GREATER ->
              g.own(nanA.binaryOp(BinaryOp.LOGICAL_AND, g.own(nanB.not()), DType.BOOL8));
          case GREATER_EQUAL -> nanA;
          default -> throw new IllegalStateException("comparison " + op);
        };
    if (nan.getNullCount() > 0) {
      try (Scalar f = Scalar.fromBool(false)) {
        nan = g.own(nan.replaceNulls(f));
      }
    }
    // LOGICAL_OR is null where either side is: a null operand keeps the comparison null.
    return g.own(ieee.binaryOp(BinaryOp.LOGICAL_OR, nan, DType.BOOL8));
  }

  /**
   * {@code a / b} of doubles: null where {@code b} is zero (either zero), as Spark gives without
   * ANSI; under ANSI such a row fails in Spark, so a batch with one goes to the CPU, which fails
   * with Spark's error.
   */
  static ColumnVector divide(GpuEval g, Divide d) {
    ColumnVector a = g.column(d.left());
    ColumnVector b = g.column(d.right());
    ColumnVector zero;
    try (Scalar z = Scalar.fromDouble(0.0)) {
      zero = g.own(b.binaryOp(BinaryOp.EQUAL, z, DType.BOOL8));
    }
    if (d.failOnError()) {
      // Spark's check runs where both sides are set: a null dividend gives null, not an error.
      ColumnVector both =
          g.own(g.own(a.isNotNull()).binaryOp(BinaryOp.LOGICAL_AND, zero, DType.BOOL8));
      try (Scalar any = both.any()) {
        if (any.isValid() && any.getBoolean()) {
          throw new CpuInstead(d.sql() + " divides by zero in this batch");
        }
      }
    }
    ColumnVector q = g.own(a.binaryOp(BinaryOp.DIV, b, DType.FLOAT64));
    try (Scalar none = Scalar.fromNull(DType.FLOAT64)) {
      return g.own(zero.ifElse(none, q));
    }
  }
}
