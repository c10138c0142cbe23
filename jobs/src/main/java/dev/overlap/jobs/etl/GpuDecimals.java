package dev.overlap.jobs.etl;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.Scalar;
import java.math.BigInteger;

/**
 * The widths of {@link GpuMoney}'s exact values: a decimal column's largest magnitude, and the
 * narrowest of cuDF's DECIMAL64 and DECIMAL128 that holds values up to a bound.
 */
final class GpuDecimals {
  static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);
  static final BigInteger INT128_MAX = BigInteger.ONE.shiftLeft(127).subtract(BigInteger.ONE);

  private GpuDecimals() {}

  /** The largest unscaled magnitude in a decimal column; 0 when it has no values. */
  static BigInteger maxAbs(ColumnVector d) {
    try (Scalar lo = d.min();
        Scalar hi = d.max()) {
      BigInteger m = BigInteger.ZERO;
      if (lo.isValid()) {
        m = m.max(lo.getBigDecimal().unscaledValue().abs());
      }
      if (hi.isValid()) {
        m = m.max(hi.getBigDecimal().unscaledValue().abs());
      }
      return m;
    }
  }

  /** The narrowest decimal type that holds unscaled values up to {@code bound} at this scale. */
  static DType.DTypeEnum width(BigInteger bound, int scale) {
    if (bound.compareTo(LONG_MAX) <= 0 && scale <= DType.DECIMAL64_MAX_PRECISION) {
      return DType.DTypeEnum.DECIMAL64;
    }
    if (bound.compareTo(INT128_MAX) <= 0 && scale <= DType.DECIMAL128_MAX_PRECISION) {
      return DType.DTypeEnum.DECIMAL128;
    }
    throw new ArithmeticException(
        "a money value of this batch needs more than 128 bits for exact arithmetic on the GPU"
            + " (up to "
            + bound
            + " at scale "
            + scale
            + ")");
  }
}
