package dev.overlap.jobs.etl;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.Arrays;
import org.apache.spark.sql.Row;

/**
 * Evaluates money expressions over one row at a time on the CPU, as Spark does: exact values as
 * {@link BigDecimal} (a product with Spark's {@code MathContext}, then rounded half up to Spark's
 * scale), floating ones as {@link Float} or {@link Double}; null when an input is null.
 */
final class CpuMoney {
  /** Spark multiplies decimals to 39 significant digits, rounding down, before its own scale. */
  private static final MathContext SPARK_PRODUCT = new MathContext(39, RoundingMode.DOWN);

  private final Object[] values;
  private final boolean[] known;
  private Row row;

  CpuMoney(EtlShape shape) {
    values = new Object[shape.expressions];
    known = new boolean[shape.expressions];
  }

  void bind(Row r) {
    row = r;
    Arrays.fill(known, false);
  }

  Object eval(MoneyExpr x) {
    if (!known[x.id]) {
      values[x.id] = compute(x);
      known[x.id] = true;
    }
    return values[x.id];
  }

  private Object compute(MoneyExpr x) {
    switch (x.op) {
      case COLUMN:
        return input(row.get(x.column), x.type);
      case ONE_MINUS:
      case ONE_PLUS:
        {
          Object a = eval(x.left);
          if (a == null) {
            return null;
          }
          boolean minus = x.op == MoneyExpr.Op.ONE_MINUS;
          switch (x.type.kind()) {
            case EXACT:
              BigDecimal d = (BigDecimal) a;
              return toScale(minus ? BigDecimal.ONE.subtract(d) : d.add(BigDecimal.ONE), x.type);
            case FLOAT:
              return minus ? 1f - asFloat(a) : asFloat(a) + 1f;
            default:
              return minus ? 1d - asDouble(a) : asDouble(a) + 1d;
          }
        }
      case TIMES:
        {
          Object a = eval(x.left);
          Object b = eval(x.right);
          if (a == null || b == null) {
            return null;
          }
          switch (x.type.kind()) {
            case EXACT:
              return toScale(((BigDecimal) a).multiply((BigDecimal) b, SPARK_PRODUCT), x.type);
            case FLOAT:
              return asFloat(a) * asFloat(b);
            default:
              return asDouble(a) * asDouble(b);
          }
        }
      default:
        throw new AssertionError(x.op);
    }
  }

  /** A value of an input row as {@link #eval} represents values of {@code type}. */
  static Object input(Object v, MoneyType type) {
    if (v == null) {
      return null;
    }
    switch (type.kind()) {
      case EXACT:
        return v instanceof BigDecimal d ? d : BigDecimal.valueOf(((Number) v).longValue());
      case FLOAT:
        return ((Number) v).floatValue();
      default:
        return ((Number) v).doubleValue();
    }
  }

  private static BigDecimal toScale(BigDecimal d, MoneyType type) {
    return d.scale() == type.scale() ? d : d.setScale(type.scale(), RoundingMode.HALF_UP);
  }

  static float asFloat(Object v) {
    return v instanceof Float f ? f : ((BigDecimal) v).floatValue();
  }

  /** As Spark casts to double: a decimal by {@link BigDecimal#doubleValue}. */
  static double asDouble(Object v) {
    if (v instanceof Double d) {
      return d;
    } else if (v instanceof Float f) {
      return f;
    }
    return ((BigDecimal) v).doubleValue();
  }

  /**
   * {@code lo <= v} (when {@code lo} is not null) and {@code v <= hi} or {@code v < hi}, as Spark
   * compares a value of this type with decimal literals; false when {@code v} is null.
   */
  static boolean between(Object v, BigDecimal lo, BigDecimal hi, boolean strictHi) {
    if (v == null) {
      return false;
    }
    if (v instanceof BigDecimal d) {
      int c = d.compareTo(hi);
      return (lo == null || d.compareTo(lo) >= 0) && (strictHi ? c < 0 : c <= 0);
    }
    double x = asDouble(v);
    return (lo == null || x >= lo.doubleValue())
        && (strictHi ? x < hi.doubleValue() : x <= hi.doubleValue());
  }
}
