package dev.overlap.jobs.etl;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import dev.overlap.jobs.etl.MoneyType.Kind;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Evaluates money expressions ({@link MoneyExpr}) over one table on the GPU, and gives the kernels
 * the filters and partial sums around them. Every column and scalar it makes is {@linkplain #own
 * owned} and closed by {@link #close} ({@link GpuScope}); columns of the bound table are used in
 * place, never closed here.
 *
 * <p>Exact values are DECIMAL64 where the batch's values allow it and DECIMAL128 otherwise: the
 * largest magnitude of each input column is read from the batch (its minimum and maximum), and
 * carried through each operation as a bound on the unscaled result. cuDF's decimal products are
 * exact at the sum of the scales; where Spark's type has a smaller scale, the product is rounded
 * half up (away from zero) as Spark does, by adding or subtracting half a unit and truncating.
 */
final class GpuMoney extends GpuScope {
  private final Val[] done;
  private Table table;

  /** A computed value: exact ones carry their scale and a bound on their unscaled magnitude. */
  record Val(ColumnVector col, Kind kind, int scale, BigInteger bound) {}

  GpuMoney(EtlShape shape) {
    this.done = new Val[shape.expressions];
  }

  /** The table whose columns {@link MoneyExpr.Op#COLUMN} expressions read from now on. */
  void bind(Table t) {
    table = t;
    Arrays.fill(done, null);
  }

  Val eval(MoneyExpr x) {
    Val v = done[x.id];
    if (v == null) {
      v = compute(x);
      done[x.id] = v;
    }
    return v;
  }

  private Val compute(MoneyExpr x) {
    switch (x.op) {
      case COLUMN:
        {
          ColumnVector c = table.getColumn(x.column);
          if (x.type.kind() != Kind.EXACT) {
            return new Val(c, x.type.kind(), 0, null); // FLOAT32 or FLOAT64, as Spark's
          }
          ColumnVector d = decimal(c);
          return narrow(new Val(d, Kind.EXACT, -d.getType().getScale(), GpuDecimals.maxAbs(d)));
        }
      case ONE_MINUS:
      case ONE_PLUS:
        {
          Val a = eval(x.left);
          boolean minus = x.op == MoneyExpr.Op.ONE_MINUS;
          if (x.type.kind() == Kind.EXACT) {
            int s = a.scale();
            BigInteger one = BigInteger.TEN.pow(s);
            BigInteger bound = a.bound().add(one);
            DType.DTypeEnum w = GpuDecimals.width(bound, s);
            DType dt = DType.create(w, -s);
            ColumnVector av = widen(a, w).col();
            Scalar oneS = own(Scalar.fromDecimal(one, dt));
            ColumnVector r =
                own(
                    minus
                        ? oneS.binaryOp(BinaryOp.SUB, av, dt)
                        : av.binaryOp(BinaryOp.ADD, oneS, dt));
            return toScale(new Val(r, Kind.EXACT, s, bound), x.type.scale());
          }
          boolean f = x.type.kind() == Kind.FLOAT;
          DType dt = f ? DType.FLOAT32 : DType.FLOAT64;
          ColumnVector av = f ? asFloat(a) : asDouble(a);
          Scalar oneS = own(f ? Scalar.fromFloat(1f) : Scalar.fromDouble(1d));
          ColumnVector r =
              own(
                  minus
                      ? oneS.binaryOp(BinaryOp.SUB, av, dt)
                      : av.binaryOp(BinaryOp.ADD, oneS, dt));
          return new Val(r, x.type.kind(), 0, null);
        }
      case TIMES:
        {
          Val a = eval(x.left);
          Val b = eval(x.right);
          if (x.type.kind() == Kind.EXACT) {
            int s = a.scale() + b.scale();
            BigInteger bound = a.bound().multiply(b.bound());
            DType.DTypeEnum w = GpuDecimals.width(bound, s);
            ColumnVector r =
                own(
                    widen(a, w)
                        .col()
                        .binaryOp(BinaryOp.MUL, widen(b, w).col(), DType.create(w, -s)));
            return toScale(new Val(r, Kind.EXACT, s, bound), x.type.scale());
          }
          boolean f = x.type.kind() == Kind.FLOAT;
          DType dt = f ? DType.FLOAT32 : DType.FLOAT64;
          ColumnVector r =
              own(
                  f
                      ? asFloat(a).binaryOp(BinaryOp.MUL, asFloat(b), dt)
                      : asDouble(a).binaryOp(BinaryOp.MUL, asDouble(b), dt));
          return new Val(r, x.type.kind(), 0, null);
        }
      default:
        throw new AssertionError(x.op);
    }
  }

  /** An integral or decimal column as DECIMAL64 or DECIMAL128 (its own scale; 0 for integers). */
  ColumnVector decimal(ColumnVector c) {
    DType t = c.getType();
    switch (t.getTypeId()) {
      case INT8:
      case INT16:
      case INT32:
      case INT64:
        return own(c.castTo(DType.create(DType.DTypeEnum.DECIMAL64, 0)));
      case DECIMAL32:
        return own(c.castTo(DType.create(DType.DTypeEnum.DECIMAL64, t.getScale())));
      case DECIMAL64:
      case DECIMAL128:
        return c;
      default:
        throw new IllegalArgumentException("not an exact money column: " + t);
    }
  }

  private Val widen(Val v, DType.DTypeEnum w) {
    if (v.col().getType().getTypeId() == w) {
      return v;
    }
    return new Val(
        own(v.col().castTo(DType.create(w, -v.scale()))), Kind.EXACT, v.scale(), v.bound());
  }

  /** DECIMAL64 where the value's bound and scale allow it. */
  private Val narrow(Val v) {
    return widen(v, GpuDecimals.width(v.bound(), v.scale()));
  }

  /** {@code v} at scale {@code s}: exact when {@code s} is larger, rounded half up otherwise. */
  private Val toScale(Val v, int s) {
    if (s == v.scale()) {
      return narrow(v);
    }
    if (s > v.scale()) {
      BigInteger bound = v.bound().multiply(BigInteger.TEN.pow(s - v.scale()));
      DType.DTypeEnum w = GpuDecimals.width(bound, s);
      ColumnVector r = own(widen(v, w).col().castTo(DType.create(w, -s)));
      return narrow(new Val(r, Kind.EXACT, s, bound));
    }
    int k = v.scale() - s;
    BigInteger unit = BigInteger.TEN.pow(k);
    BigInteger half = unit.shiftRight(1); // 5 * 10^(k-1)
    BigInteger bound = v.bound().add(half);
    DType.DTypeEnum w = GpuDecimals.width(bound, v.scale());
    DType dt = DType.create(w, -v.scale());
    ColumnVector x = widen(v, w).col();
    Scalar zero = own(Scalar.fromDecimal(BigInteger.ZERO, dt));
    Scalar halfS = own(Scalar.fromDecimal(half, dt));
    ColumnVector nonNegative = own(x.binaryOp(BinaryOp.GREATER_EQUAL, zero, DType.BOOL8));
    ColumnVector up = own(x.binaryOp(BinaryOp.ADD, halfS, dt));
    ColumnVector down = own(x.binaryOp(BinaryOp.SUB, halfS, dt));
    ColumnVector away = own(nonNegative.ifElse(up, down));
    // A decimal cast to a smaller scale truncates toward zero.
    ColumnVector r = own(away.castTo(DType.create(w, -s)));
    return narrow(new Val(r, Kind.EXACT, s, bound.divide(unit)));
  }

  ColumnVector asDouble(Val v) {
    return v.kind() == Kind.DOUBLE ? v.col() : own(v.col().castTo(DType.FLOAT64));
  }

  ColumnVector asFloat(Val v) {
    return v.kind() == Kind.FLOAT ? v.col() : own(v.col().castTo(DType.FLOAT32));
  }

  /** The column to sum: exact values as they are, floats as doubles (Spark sums them so). */
  ColumnVector summand(Val v) {
    return v.kind() == Kind.EXACT ? v.col() : asDouble(v);
  }

  /**
   * A key that splits the rows into slices so that no slice's sum of any of {@code sums} can
   * overflow 64 bits: row number / rows per slice. All 0 for batches of TPC-H's values.
   */
  ColumnVector slices(int rows, Val... sums) {
    long per = Integer.MAX_VALUE;
    for (Val v : sums) {
      if (v.kind() == Kind.EXACT
          && v.col().getType().getTypeId() == DType.DTypeEnum.DECIMAL64
          && v.bound().signum() > 0) {
        per = Math.min(per, GpuDecimals.LONG_MAX.divide(v.bound()).longValue());
      }
    }
    Scalar zero = own(Scalar.fromInt(0));
    Scalar perS = own(Scalar.fromInt((int) Math.max(1, per)));
    ColumnVector seq = own(ColumnVector.sequence(zero, rows));
    return own(seq.binaryOp(BinaryOp.DIV, perS, DType.INT32));
  }

  /**
   * A sum from a group-by, in the kernel's declared partial type ({@link MoneyType#partialType}).
   */
  ColumnVector partial(ColumnVector sum, MoneyType type) {
    if (type.kind() != Kind.EXACT) {
      return sum; // FLOAT64
    }
    return own(sum.castTo(DType.create(DType.DTypeEnum.DECIMAL128, -type.scale())));
  }

  /**
   * {@code column >= lo} (when {@code lo} is not null) and {@code column <= hi} or {@code < hi}
   * ({@code strictHi}), compared as Spark compares a value of {@code type} with these decimal
   * literals: exactly for exact values, as doubles for floating ones.
   */
  ColumnVector between(
      ColumnVector c, MoneyType type, BigDecimal lo, BigDecimal hi, boolean strictHi) {
    List<ColumnVector> parts = new ArrayList<>();
    if (type.kind() == Kind.EXACT) {
      ColumnVector d = decimal(c);
      int s = -d.getType().getScale();
      // x >= lo  <=>  unscaled(x) >= ceil(lo * 10^s);
      // x <= hi  <=>  unscaled(x) <= floor(hi * 10^s);
      // x < hi   <=>  unscaled(x) < ceil(hi * 10^s).
      BigInteger loU = lo == null ? null : lo.setScale(s, RoundingMode.CEILING).unscaledValue();
      BigInteger hiU =
          hi.setScale(s, strictHi ? RoundingMode.CEILING : RoundingMode.FLOOR).unscaledValue();
      BigInteger big = hiU.abs().max(loU == null ? BigInteger.ZERO : loU.abs());
      DType.DTypeEnum w =
          d.getType().getTypeId() == DType.DTypeEnum.DECIMAL128
              ? DType.DTypeEnum.DECIMAL128
              : GpuDecimals.width(big, s);
      DType dt = DType.create(w, -s);
      ColumnVector dw = d.getType().equals(dt) ? d : own(d.castTo(dt));
      if (loU != null) {
        Scalar loS = own(Scalar.fromDecimal(loU, dt));
        parts.add(own(dw.binaryOp(BinaryOp.GREATER_EQUAL, loS, DType.BOOL8)));
      }
      Scalar hiS = own(Scalar.fromDecimal(hiU, dt));
      parts.add(own(dw.binaryOp(strictHi ? BinaryOp.LESS : BinaryOp.LESS_EQUAL, hiS, DType.BOOL8)));
    } else {
      ColumnVector dv = type.kind() == Kind.DOUBLE ? c : own(c.castTo(DType.FLOAT64));
      if (lo != null) {
        Scalar loS = own(Scalar.fromDouble(lo.doubleValue()));
        parts.add(own(dv.binaryOp(BinaryOp.GREATER_EQUAL, loS, DType.BOOL8)));
      }
      Scalar hiS = own(Scalar.fromDouble(hi.doubleValue()));
      parts.add(own(dv.binaryOp(strictHi ? BinaryOp.LESS : BinaryOp.LESS_EQUAL, hiS, DType.BOOL8)));
    }
    return and(parts.toArray(new ColumnVector[0]));
  }

  /** The rows where every condition holds; a null condition does not hold. */
  ColumnVector and(ColumnVector... conditions) {
    ColumnVector r = conditions[0];
    for (int i = 1; i < conditions.length; i++) {
      r = own(r.binaryOp(BinaryOp.LOGICAL_AND, conditions[i], DType.BOOL8));
    }
    return r;
  }
}
