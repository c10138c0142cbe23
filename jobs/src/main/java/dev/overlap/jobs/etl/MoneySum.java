package dev.overlap.jobs.etl;

import java.math.BigDecimal;

/**
 * A running sum as Spark keeps it, for the CPU kernels' partial sums of values as {@link CpuMoney}
 * gives them: null until a non-null value, exact or in double.
 */
final class MoneySum {
  private BigDecimal exact;
  private double floating;
  private boolean any;

  void add(Object v) {
    if (v == null) {
      return;
    }
    if (v instanceof BigDecimal d) {
      exact = exact == null ? d : exact.add(d);
    } else {
      floating += CpuMoney.asDouble(v);
    }
    any = true;
  }

  /** The sum in the kernel's partial type for values of {@code type}, or null. */
  Object get(MoneyType type) {
    if (!any) {
      return null;
    }
    return type.kind() == MoneyType.Kind.EXACT ? exact : (Object) floating;
  }
}
