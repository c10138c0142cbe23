package dev.overlap.jobs.etl;

import dev.overlap.jobs.cli.UsageException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataType;
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
 * <p>The expressions are {@link MoneyExpr}s of {@link MoneyType}s. {@link GpuMoney} evaluates them
 * over a cuDF table, {@link CpuMoney} over Spark rows; {@link Q1Kernel} and {@link Q6Kernel} hold a
 * shape and use both.
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

  /** The input's own names for {@link #COLUMNS}, in that order. */
  final String[] names;

  /** The input's types for {@link #COLUMNS}, in that order. */
  final DataType[] types;

  final MoneyExpr quantity;
  final MoneyExpr price;
  final MoneyExpr discount;
  final MoneyExpr tax;

  /** {@code l_extendedprice * (1 - l_discount)}. */
  final MoneyExpr discPrice;

  /** {@code l_extendedprice * (1 - l_discount) * (1 + l_tax)}. */
  final MoneyExpr charge;

  /** {@code l_extendedprice * l_discount}, Q6's revenue. */
  final MoneyExpr revenue;

  /** The number of expressions, their ids being 0 to this minus one. */
  final int expressions;

  private EtlShape(String[] names, DataType[] types, DataType[] derived) {
    this.names = names;
    this.types = types;
    // Column numbers are the kernels' input positions; Q6Kernel takes the first three in the same
    // places as Q1Kernel.
    int id = 0;
    quantity = MoneyExpr.column(id++, QUANTITY, types[QUANTITY]);
    price = MoneyExpr.column(id++, PRICE, types[PRICE]);
    discount = MoneyExpr.column(id++, DISCOUNT, types[DISCOUNT]);
    tax = MoneyExpr.column(id++, TAX, types[TAX]);
    MoneyExpr oneMinusDisc = MoneyExpr.of(id++, MoneyExpr.Op.ONE_MINUS, discount, null, derived[0]);
    MoneyExpr onePlusTax = MoneyExpr.of(id++, MoneyExpr.Op.ONE_PLUS, tax, null, derived[1]);
    discPrice = MoneyExpr.of(id++, MoneyExpr.Op.TIMES, price, oneMinusDisc, derived[2]);
    charge = MoneyExpr.of(id++, MoneyExpr.Op.TIMES, discPrice, onePlusTax, derived[3]);
    revenue = MoneyExpr.of(id++, MoneyExpr.Op.TIMES, price, discount, derived[4]);
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
    for (MoneyExpr x :
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
  private void checkScale(MoneyExpr x) {
    if (x.left != null) {
      checkScale(x.left);
    }
    if (x.right != null) {
      checkScale(x.right);
    }
    if (x.type.kind() == MoneyType.Kind.EXACT && x.exactScale() > 38) {
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
}
