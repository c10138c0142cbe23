package dev.overlap.jobs;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import java.io.Serializable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * What etl computes on one {@code lineitem} input, read from its schema before any work runs: the
 * input's own names for the columns it reads, and the money expressions of TPC-H Q1 and Q6 with the
 * type Spark SQL gives each of them over this input.
 *
 * <p>Money columns may be decimals of any precision and scale, int, long, float or double, and may
 * hold nulls. Every expression is computed in the type Spark gives it, so results equal Spark
 * SQL's: an exact value (a decimal, or an int or long taken as a decimal of scale 0) is computed
 * exactly and rounded half up to Spark's scale where Spark rounds (a product whose exact scale
 * Spark cannot keep); a float or double value is computed in that floating type. Sums of exact
 * values are exact.
 *
 * <p>{@link Gpu} evaluates the expressions over a cuDF table, {@link Cpu} over Spark rows; {@link
 * Q1Kernel} and {@link Q6Kernel} hold a shape and use both.
 */
final class EtlShape implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The columns etl reads, in the order {@link Q1Kernel} takes them. */
  static final List<String> COLUMNS =
      List.of(
          "l_quantity",
          "l_extendedprice",
          "l_discount",
          "l_tax",
          "l_returnflag",
          "l_linestatus",
          "l_shipdate");

  static final int QUANTITY = 0;
  static final int PRICE = 1;
  static final int DISCOUNT = 2;
  static final int TAX = 3;
  static final int RETURNFLAG = 4;
  static final int LINESTATUS = 5;
  static final int SHIPDATE = 6;

  /** How a value is computed. */
  enum Kind {
    /** A decimal, or an int or long (scale 0): exact, with the scale Spark gives it. */
    EXACT,
    FLOAT,
    DOUBLE
  }

  /** The type of a value as etl computes it; {@code scale} only for {@link Kind#EXACT}. */
  record Num(Kind kind, int scale) implements Serializable {
    static Num of(DataType t) {
      if (t instanceof DecimalType d) {
        return new Num(Kind.EXACT, d.scale());
      } else if (t instanceof IntegerType || t instanceof LongType) {
        return new Num(Kind.EXACT, 0);
      } else if (t instanceof FloatType) {
        return new Num(Kind.FLOAT, 0);
      } else if (t instanceof DoubleType) {
        return new Num(Kind.DOUBLE, 0);
      }
      throw new IllegalStateException("no money type: " + t.simpleString());
    }

    /**
     * The type of a partial sum in a kernel's output: decimal(38,s) for exact values (Spark casts
     * the total to its own sum type at the end), double for floating ones (Spark sums floats as
     * doubles).
     */
    DataType partialType() {
      return kind == Kind.EXACT
          ? DataTypes.createDecimalType(38, scale)
          : (DataType) DataTypes.DoubleType;
    }
  }

  /** A money expression: an input column, {@code 1 - x}, {@code 1 + x} or {@code x * y}. */
  static final class Expr implements Serializable {
    private static final long serialVersionUID = 1L;

    enum Op {
      COLUMN,
      ONE_MINUS,
      ONE_PLUS,
      TIMES
    }

    final int id;
    final Op op;
    final int column;
    final Expr left;
    final Expr right;

    /** The type Spark gives this expression over the input. */
    final Num type;

    private Expr(int id, Op op, int column, Expr left, Expr right, Num type) {
      this.id = id;
      this.op = op;
      this.column = column;
      this.left = left;
      this.right = right;
      this.type = type;
    }

    /** The scale of the exact result before it is brought to Spark's scale. */
    int exactScale() {
      switch (op) {
        case COLUMN:
          return type.scale();
        case ONE_MINUS:
        case ONE_PLUS:
          return left.type.scale();
        default:
          return left.type.scale() + right.type.scale();
      }
    }
  }

  /** The input's own names for {@link #COLUMNS}, in that order. */
  final String[] names;

  /** The input's types for {@link #COLUMNS}, in that order. */
  final DataType[] types;

  final Expr quantity;
  final Expr price;
  final Expr discount;
  final Expr tax;

  /** {@code l_extendedprice * (1 - l_discount)}. */
  final Expr discPrice;

  /** {@code l_extendedprice * (1 - l_discount) * (1 + l_tax)}. */
  final Expr charge;

  /** {@code l_extendedprice * l_discount}, Q6's revenue. */
  final Expr revenue;

  /** The number of expressions, their ids being 0 to this minus one. */
  final int expressions;

  private EtlShape(String[] names, DataType[] types, DataType[] derived) {
    this.names = names;
    this.types = types;
    // Column numbers are the kernels' input positions; Q6Kernel takes the first three in the same
    // places as Q1Kernel.
    int id = 0;
    quantity = new Expr(id++, Expr.Op.COLUMN, QUANTITY, null, null, Num.of(types[QUANTITY]));
    price = new Expr(id++, Expr.Op.COLUMN, PRICE, null, null, Num.of(types[PRICE]));
    discount = new Expr(id++, Expr.Op.COLUMN, DISCOUNT, null, null, Num.of(types[DISCOUNT]));
    tax = new Expr(id++, Expr.Op.COLUMN, TAX, null, null, Num.of(types[TAX]));
    Expr oneMinusDisc = new Expr(id++, Expr.Op.ONE_MINUS, -1, discount, null, Num.of(derived[0]));
    Expr onePlusTax = new Expr(id++, Expr.Op.ONE_PLUS, -1, tax, null, Num.of(derived[1]));
    discPrice = new Expr(id++, Expr.Op.TIMES, -1, price, oneMinusDisc, Num.of(derived[2]));
    charge = new Expr(id++, Expr.Op.TIMES, -1, discPrice, onePlusTax, Num.of(derived[3]));
    revenue = new Expr(id++, Expr.Op.TIMES, -1, price, discount, Num.of(derived[4]));
    expressions = id;
  }

  private static final String MONEY_TYPES = "decimal, double, float, int or long";

  /**
   * The shape of {@code lineitem}, from its schema and Spark's analysis of the money expressions
   * over it (nothing is executed).
   *
   * @throws UsageException when a column is missing or has a type etl cannot use
   */
  static EtlShape of(Dataset<Row> lineitem) {
    StructType schema = lineitem.schema();
    boolean caseSensitive =
        Boolean.parseBoolean(
            lineitem.sparkSession().conf().get("spark.sql.caseSensitive", "false"));
    String[] names = new String[COLUMNS.size()];
    DataType[] types = new DataType[COLUMNS.size()];
    for (int i = 0; i < names.length; i++) {
      String want = COLUMNS.get(i);
      List<StructField> found = new ArrayList<>();
      for (StructField f : schema.fields()) {
        if (caseSensitive ? f.name().equals(want) : f.name().equalsIgnoreCase(want)) {
          found.add(f);
        }
      }
      if (found.isEmpty()) {
        throw new UsageException(
            "input has no column '"
                + want
                + "' (etl needs "
                + String.join(", ", COLUMNS)
                + "); is --input a TPC-H lineitem table?");
      }
      if (found.size() > 1) {
        List<String> all = new ArrayList<>();
        found.forEach(f -> all.add("'" + f.name() + "'"));
        throw new UsageException(
            "input has "
                + found.size()
                + " columns named '"
                + want
                + "' when case is ignored ("
                + String.join(", ", all)
                + "); keep one, or set spark.sql.caseSensitive=true");
      }
      StructField f = found.get(0);
      DataType t = f.dataType();
      boolean ok;
      String accepted;
      if (i <= TAX) {
        ok =
            t instanceof DecimalType
                || t instanceof DoubleType
                || t instanceof FloatType
                || t instanceof IntegerType
                || t instanceof LongType;
        accepted = MONEY_TYPES;
      } else if (i == SHIPDATE) {
        ok = t instanceof DateType;
        accepted = "date";
      } else {
        ok = t instanceof StringType;
        accepted = "string";
      }
      if (!ok) {
        throw new UsageException(
            "input column '"
                + f.name()
                + "' is "
                + t.simpleString()
                + "; etl accepts "
                + accepted
                + " for it");
      }
      names[i] = f.name();
      types[i] = t;
    }
    // Spark's types for the derived values, by analysis of the same expressions over this input.
    String e = quote(names[PRICE]);
    String d = quote(names[DISCOUNT]);
    String t = quote(names[TAX]);
    StructField[] probe =
        lineitem
            .selectExpr(
                "1 - " + d,
                "1 + " + t,
                e + " * (1 - " + d + ")",
                e + " * (1 - " + d + ") * (1 + " + t + ")",
                e + " * " + d)
            .schema()
            .fields();
    DataType[] derived = new DataType[probe.length];
    for (int i = 0; i < probe.length; i++) {
      derived[i] = probe[i].dataType();
    }
    EtlShape shape = new EtlShape(names, types, derived);
    for (Expr x :
        List.of(
            shape.quantity,
            shape.price,
            shape.discount,
            shape.tax,
            shape.discPrice,
            shape.charge,
            shape.revenue)) {
      shape.checkScale(x);
    }
    return shape;
  }

  /** Exact products are computed at the sum of their inputs' scales, which cuDF caps at 38. */
  private void checkScale(Expr x) {
    if (x.left != null) {
      checkScale(x.left);
    }
    if (x.right != null) {
      checkScale(x.right);
    }
    if (x.type.kind() == Kind.EXACT && x.exactScale() > 38) {
      throw new UsageException(
          String.format(
              Locale.ROOT,
              "input columns %s have too many digits after the point for etl's exact arithmetic"
                  + " (a product of two of them may have at most 38); cast them to decimals of"
                  + " smaller scale or to double",
              describe()));
    }
  }

  /** The money columns, each with its type: {@code 'l_discount' decimal(15,4), ...}. */
  String describe() {
    List<String> out = new ArrayList<>();
    for (int i = QUANTITY; i <= TAX; i++) {
      out.add("'" + names[i] + "' " + types[i].simpleString());
    }
    return String.join(", ", out);
  }

  /** The input's name for column {@code i} of {@link #COLUMNS}, quoted for a SQL expression. */
  String column(int i) {
    return quote(names[i]);
  }

  static String quote(String name) {
    return "`" + name.replace("`", "``") + "`";
  }

  /** The input columns of a kernel: {@link #COLUMNS} at {@code which}, by the input's names. */
  String[] select(int... which) {
    String[] out = new String[which.length];
    for (int i = 0; i < which.length; i++) {
      out[i] = column(which[i]);
    }
    return out;
  }

  // ---- GPU ----------------------------------------------------------------------------------

  /**
   * Evaluates money expressions over one table on the GPU. Every column and scalar it makes is
   * {@linkplain #own owned} and closed by {@link #close}; columns of the bound table are used in
   * place, never closed here.
   *
   * <p>Exact values are DECIMAL64 where the batch's values allow it and DECIMAL128 otherwise: the
   * largest magnitude of each input column is read from the batch (its minimum and maximum), and
   * carried through each operation as a bound on the unscaled result. cuDF's decimal products are
   * exact at the sum of the scales; where Spark's type has a smaller scale, the product is rounded
   * half up (away from zero) as Spark does, by adding or subtracting half a unit and truncating.
   */
  static final class Gpu implements AutoCloseable {
    private static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);
    private static final BigInteger INT128_MAX =
        BigInteger.ONE.shiftLeft(127).subtract(BigInteger.ONE);

    private final Deque<AutoCloseable> owned = new ArrayDeque<>();
    private final Val[] done;
    private Table table;

    /** A computed value: exact ones carry their scale and a bound on their unscaled magnitude. */
    record Val(ColumnVector col, Kind kind, int scale, BigInteger bound) {}

    Gpu(EtlShape shape) {
      this.done = new Val[shape.expressions];
    }

    /** The table whose columns {@link Expr.Op#COLUMN} expressions read from now on. */
    void bind(Table t) {
      table = t;
      Arrays.fill(done, null);
    }

    <T extends AutoCloseable> T own(T x) {
      owned.push(x);
      return x;
    }

    @Override
    public void close() {
      RuntimeException first = null;
      while (!owned.isEmpty()) {
        try {
          owned.pop().close();
        } catch (Exception e) {
          RuntimeException r = e instanceof RuntimeException re ? re : new RuntimeException(e);
          if (first == null) {
            first = r;
          } else {
            first.addSuppressed(r);
          }
        }
      }
      if (first != null) {
        throw first;
      }
    }

    Val eval(Expr x) {
      Val v = done[x.id];
      if (v == null) {
        v = compute(x);
        done[x.id] = v;
      }
      return v;
    }

    private Val compute(Expr x) {
      switch (x.op) {
        case COLUMN:
          {
            ColumnVector c = table.getColumn(x.column);
            if (x.type.kind() != Kind.EXACT) {
              return new Val(c, x.type.kind(), 0, null); // FLOAT32 or FLOAT64, as Spark's
            }
            ColumnVector d = decimal(c);
            return narrow(new Val(d, Kind.EXACT, -d.getType().getScale(), maxAbs(d)));
          }
        case ONE_MINUS:
        case ONE_PLUS:
          {
            Val a = eval(x.left);
            boolean minus = x.op == Expr.Op.ONE_MINUS;
            if (x.type.kind() == Kind.EXACT) {
              int s = a.scale();
              BigInteger one = BigInteger.TEN.pow(s);
              BigInteger bound = a.bound().add(one);
              DType.DTypeEnum w = width(bound, s);
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
              DType.DTypeEnum w = width(bound, s);
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

    private Val widen(Val v, DType.DTypeEnum w) {
      if (v.col().getType().getTypeId() == w) {
        return v;
      }
      return new Val(
          own(v.col().castTo(DType.create(w, -v.scale()))), Kind.EXACT, v.scale(), v.bound());
    }

    /** DECIMAL64 where the value's bound and scale allow it. */
    private Val narrow(Val v) {
      return widen(v, width(v.bound(), v.scale()));
    }

    /** {@code v} at scale {@code s}: exact when {@code s} is larger, rounded half up otherwise. */
    private Val toScale(Val v, int s) {
      if (s == v.scale()) {
        return narrow(v);
      }
      if (s > v.scale()) {
        BigInteger bound = v.bound().multiply(BigInteger.TEN.pow(s - v.scale()));
        DType.DTypeEnum w = width(bound, s);
        ColumnVector r = own(widen(v, w).col().castTo(DType.create(w, -s)));
        return narrow(new Val(r, Kind.EXACT, s, bound));
      }
      int k = v.scale() - s;
      BigInteger unit = BigInteger.TEN.pow(k);
      BigInteger half = unit.shiftRight(1); // 5 * 10^(k-1)
      BigInteger bound = v.bound().add(half);
      DType.DTypeEnum w = width(bound, v.scale());
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
          per = Math.min(per, LONG_MAX.divide(v.bound()).longValue());
        }
      }
      Scalar zero = own(Scalar.fromInt(0));
      Scalar perS = own(Scalar.fromInt((int) Math.max(1, per)));
      ColumnVector seq = own(ColumnVector.sequence(zero, rows));
      return own(seq.binaryOp(BinaryOp.DIV, perS, DType.INT32));
    }

    /** A sum from a group-by, in the kernel's declared partial type ({@link Num#partialType}). */
    ColumnVector partial(ColumnVector sum, Num type) {
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
    ColumnVector between(ColumnVector c, Num type, BigDecimal lo, BigDecimal hi, boolean strictHi) {
      List<ColumnVector> parts = new ArrayList<>();
      if (type.kind() == Kind.EXACT) {
        ColumnVector d = decimal(c);
        int s = -d.getType().getScale();
        // x >= lo  <=>  unscaled(x) >= ceil(lo * 10^s); x <= hi <=> unscaled(x) <= floor(hi *
        // 10^s);
        // x < hi  <=>  unscaled(x) < ceil(hi * 10^s).
        BigInteger loU = lo == null ? null : lo.setScale(s, RoundingMode.CEILING).unscaledValue();
        BigInteger hiU =
            hi.setScale(s, strictHi ? RoundingMode.CEILING : RoundingMode.FLOOR).unscaledValue();
        BigInteger big = hiU.abs().max(loU == null ? BigInteger.ZERO : loU.abs());
        DType.DTypeEnum w =
            d.getType().getTypeId() == DType.DTypeEnum.DECIMAL128
                ? DType.DTypeEnum.DECIMAL128
                : width(big, s);
        DType dt = DType.create(w, -s);
        ColumnVector dw = d.getType().equals(dt) ? d : own(d.castTo(dt));
        if (loU != null) {
          Scalar loS = own(Scalar.fromDecimal(loU, dt));
          parts.add(own(dw.binaryOp(BinaryOp.GREATER_EQUAL, loS, DType.BOOL8)));
        }
        Scalar hiS = own(Scalar.fromDecimal(hiU, dt));
        parts.add(
            own(dw.binaryOp(strictHi ? BinaryOp.LESS : BinaryOp.LESS_EQUAL, hiS, DType.BOOL8)));
      } else {
        ColumnVector dv = type.kind() == Kind.DOUBLE ? c : own(c.castTo(DType.FLOAT64));
        if (lo != null) {
          Scalar loS = own(Scalar.fromDouble(lo.doubleValue()));
          parts.add(own(dv.binaryOp(BinaryOp.GREATER_EQUAL, loS, DType.BOOL8)));
        }
        Scalar hiS = own(Scalar.fromDouble(hi.doubleValue()));
        parts.add(
            own(dv.binaryOp(strictHi ? BinaryOp.LESS : BinaryOp.LESS_EQUAL, hiS, DType.BOOL8)));
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

  // ---- CPU ----------------------------------------------------------------------------------

  /**
   * Evaluates money expressions over one row at a time on the CPU, as Spark does: exact values as
   * {@link BigDecimal} (a product with Spark's {@code MathContext}, then rounded half up to Spark's
   * scale), floating ones as {@link Float} or {@link Double}; null when an input is null.
   */
  static final class Cpu {
    /** Spark multiplies decimals to 39 significant digits, rounding down, before its own scale. */
    private static final MathContext SPARK_PRODUCT = new MathContext(39, RoundingMode.DOWN);

    private final Object[] values;
    private final boolean[] known;
    private Row row;

    Cpu(EtlShape shape) {
      values = new Object[shape.expressions];
      known = new boolean[shape.expressions];
    }

    void bind(Row r) {
      row = r;
      Arrays.fill(known, false);
    }

    Object eval(Expr x) {
      if (!known[x.id]) {
        values[x.id] = compute(x);
        known[x.id] = true;
      }
      return values[x.id];
    }

    private Object compute(Expr x) {
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
            boolean minus = x.op == Expr.Op.ONE_MINUS;
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
    static Object input(Object v, Num type) {
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

    private static BigDecimal toScale(BigDecimal d, Num type) {
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

  /** A running sum as Spark keeps it: null until a non-null value, exact or in double. */
  static final class Sum {
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
        floating += Cpu.asDouble(v);
      }
      any = true;
    }

    /** The sum in the kernel's partial type for values of {@code type}, or null. */
    Object get(Num type) {
      if (!any) {
        return null;
      }
      return type.kind() == Kind.EXACT ? exact : (Object) floating;
    }
  }
}
