package dev.overlap.jobs.etl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.PipelineReport;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Lineitem tables as other TPC-H generators write them, and the check that etl's Q1 and Q6 over
 * them equal Spark SQL's: the standard query text run by Spark SQL over the same Parquet files,
 * independently of etl's code. Shared by the CPU test ({@link EtlInputsTest}) and the GPU one
 * ({@link EtlInputsGpuTest}).
 */
public final class EtlInputs {
  private EtlInputs() {}

  public static final String Q1 =
      "select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty,"
          + " sum(l_extendedprice) as sum_base_price,"
          + " sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,"
          + " sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,"
          + " avg(l_quantity) as avg_qty, avg(l_extendedprice) as avg_price,"
          + " avg(l_discount) as avg_disc, count(*) as count_order"
          + " from %s where l_shipdate <= date '1998-12-01' - interval '90' day"
          + " group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus";

  public static final String Q6 =
      "select sum(l_extendedprice * l_discount) as revenue from %s"
          + " where l_shipdate >= date '1994-01-01'"
          + " and l_shipdate < date '1994-01-01' + interval '1' year"
          + " and l_discount between 0.06 - 0.01 and 0.06 + 0.01 and l_quantity < 24";

  /**
   * Doubles from etl and from Spark SQL are sums of the same values in different orders: equal up
   * to a relative 1e-9, not to the last bit.
   */
  static final double RELATIVE = 1e-9;

  /** How one test table stores the money columns. */
  public record Kinds(
      String name,
      DataType quantity,
      DataType price,
      DataType discount,
      DataType tax,
      BigDecimal priceScale,
      boolean nulls,
      boolean upperCase) {}

  static Kinds kinds(String name, DataType q, DataType e, DataType d, DataType t) {
    return new Kinds(name, q, e, d, t, BigDecimal.ONE, true, false);
  }

  static DataType dec(int p, int s) {
    return DataTypes.createDecimalType(p, s);
  }

  /** The cases every run checks. */
  public static List<Kinds> cases() {
    DataType d = DataTypes.DoubleType;
    DataType f = DataTypes.FloatType;
    DataType i = DataTypes.IntegerType;
    DataType l = DataTypes.LongType;
    List<Kinds> out = new ArrayList<>();
    out.add(kinds("doubles", d, d, d, d));
    out.add(kinds("decimal_15_4", dec(15, 4), dec(15, 4), dec(15, 4), dec(15, 4)));
    out.add(kinds("decimal_10_2", dec(10, 2), dec(10, 2), dec(10, 2), dec(10, 2)));
    out.add(kinds("int_quantity", i, dec(12, 2), dec(12, 2), dec(12, 2)));
    out.add(kinds("tpch_decimal_12_2", dec(12, 2), dec(12, 2), dec(12, 2), dec(12, 2)));
    out.add(kinds("floats", f, f, f, f));
    out.add(kinds("long_quantity_mixed", l, dec(18, 2), d, dec(7, 2)));
    out.add(kinds("decimal_7_2", dec(7, 2), dec(9, 2), dec(5, 4), dec(3, 2)));
    out.add(kinds("float_price_int_rest", i, f, i, i));
    // Prices near the top of decimal(18,2) and decimal(30,10): the GPU computes these in 128 bits
    // and sums 64-bit values in slices that cannot overflow; Spark rounds the products.
    out.add(
        new Kinds(
            "decimal_18_2_large",
            dec(18, 2),
            dec(18, 2),
            dec(18, 2),
            dec(18, 2),
            new BigDecimal("1e10"),
            true,
            false));
    out.add(
        new Kinds(
            "decimal_30_10_large",
            dec(20, 4),
            dec(30, 10),
            dec(16, 10),
            dec(16, 10),
            new BigDecimal("1e11"),
            true,
            false));
    out.add(
        new Kinds(
            "upper_case_names",
            dec(12, 2),
            dec(12, 2),
            dec(12, 2),
            dec(12, 2),
            BigDecimal.ONE,
            true,
            true));
    return out;
  }

  private static final LocalDate FIRST = LocalDate.of(1992, 1, 1);

  /**
   * Writes a lineitem table of {@code rows} rows as {@code k} says under {@code dir} and reads it
   * back. Values have four decimals before they are stored (rounded half up to the column's scale);
   * with {@code k.nulls()}, about one row in twenty has a null quantity, price, discount, tax or
   * ship date, flag 'X' rows have no discount at all, and some rows have a null return flag.
   */
  public static Dataset<Row> write(SparkSession spark, Path dir, Kinds k, int rows, long seed) {
    String[] names = {
      "l_quantity",
      "l_extendedprice",
      "l_discount",
      "l_tax",
      "l_returnflag",
      "l_linestatus",
      "l_shipdate",
      "l_comment"
    };
    if (k.upperCase()) {
      for (int i = 0; i < names.length; i++) {
        names[i] = names[i].toUpperCase(Locale.ROOT);
      }
    }
    StructType schema =
        new StructType()
            .add(names[0], k.quantity())
            .add(names[1], k.price())
            .add(names[2], k.discount())
            .add(names[3], k.tax())
            .add(names[4], DataTypes.StringType)
            .add(names[5], DataTypes.StringType)
            .add(names[6], DataTypes.DateType)
            .add(names[7], DataTypes.StringType);
    Random rnd = new Random(seed);
    String[] flags = {"A", "N", "R"};
    List<Row> data = new ArrayList<>();
    for (int i = 0; i < rows; i++) {
      BigDecimal qty = BigDecimal.valueOf(1 + rnd.nextInt(50)).add(frac(rnd));
      BigDecimal price =
          BigDecimal.valueOf(900 + rnd.nextInt(104_100)).add(frac(rnd)).multiply(k.priceScale());
      BigDecimal disc = BigDecimal.valueOf(rnd.nextInt(1001), 4);
      BigDecimal tax = BigDecimal.valueOf(rnd.nextInt(801), 4);
      String flag = flags[rnd.nextInt(3)];
      if (k.nulls() && i % 97 == 5) {
        flag = "X";
      } else if (k.nulls() && i % 89 == 7) {
        flag = null;
      }
      String status = rnd.nextBoolean() ? "F" : "O";
      LocalDate ship = FIRST.plusDays(rnd.nextInt(2527));
      boolean n = k.nulls();
      data.add(
          RowFactory.create(
              n && rnd.nextInt(20) == 0 ? null : value(qty, k.quantity()),
              n && rnd.nextInt(40) == 0 ? null : value(price, k.price()),
              n && (rnd.nextInt(20) == 0 || "X".equals(flag)) ? null : value(disc, k.discount()),
              n && rnd.nextInt(20) == 0 ? null : value(tax, k.tax()),
              flag,
              status,
              n && rnd.nextInt(20) == 0 ? null : java.sql.Date.valueOf(ship),
              "row " + i));
    }
    String path = dir.resolve(k.name()).toString();
    spark.createDataFrame(data, schema).repartition(3).write().parquet(path);
    return spark.read().parquet(path);
  }

  private static BigDecimal frac(Random rnd) {
    return BigDecimal.valueOf(rnd.nextInt(10_000), 4);
  }

  private static Object value(BigDecimal v, DataType t) {
    if (t instanceof DecimalType d) {
      return v.setScale(d.scale(), RoundingMode.HALF_UP);
    } else if (t.equals(DataTypes.DoubleType)) {
      return v.doubleValue();
    } else if (t.equals(DataTypes.FloatType)) {
      return v.floatValue();
    } else if (t.equals(DataTypes.IntegerType)) {
      return v.setScale(0, RoundingMode.HALF_UP).intValueExact();
    } else if (t.equals(DataTypes.LongType)) {
      return v.setScale(0, RoundingMode.HALF_UP).longValueExact();
    }
    throw new IllegalArgumentException(t.simpleString());
  }

  /**
   * Runs etl's Q1 and Q6 over {@code lineitem} and checks them against Spark SQL's over the same
   * table: the same column types, the same rows (exact but for doubles, see {@link #RELATIVE}).
   * Returns the two queries' pipeline reports.
   */
  static PipelineReport[] check(SparkSession spark, Dataset<Row> lineitem, String name) {
    String view = "lineitem_" + name;
    lineitem.createOrReplaceTempView(view);
    PipelineReport r1 = PipelineReport.create(spark);
    PipelineReport r6 = PipelineReport.create(spark);
    assertSame(
        spark.sql(String.format(Locale.ROOT, Q1, view)), TestEtl.q1(lineitem, r1), name + " Q1");
    assertSame(
        spark.sql(String.format(Locale.ROOT, Q6, view)), TestEtl.q6(lineitem, r6), name + " Q6");
    return new PipelineReport[] {r1, r6};
  }

  public static void assertSame(Dataset<Row> want, Dataset<Row> got, String what) {
    assertEquals(typesOf(want.schema()), typesOf(got.schema()), what + ": column types");
    List<Row> w = want.collectAsList();
    List<Row> g = got.collectAsList();
    assertEquals(w.size(), g.size(), what + ": rows\n" + w + "\n" + g);
    assertTrue(!w.isEmpty(), what + ": no rows");
    for (int i = 0; i < w.size(); i++) {
      for (int c = 0; c < want.schema().size(); c++) {
        Object a = w.get(i).get(c);
        Object b = g.get(i).get(c);
        String at = what + ": row " + i + " column " + want.schema().fields()[c].name();
        if (a instanceof Double x && b instanceof Double y) {
          assertTrue(
              Math.abs(x - y) <= RELATIVE * Math.max(Math.abs(x), Math.abs(y)),
              at + ": " + x + " vs " + y);
        } else {
          assertEquals(a, b, at);
        }
      }
    }
  }

  static List<String> typesOf(StructType s) {
    List<String> out = new ArrayList<>();
    for (StructField f : s.fields()) {
      out.add(f.name().toLowerCase(Locale.ROOT) + ":" + f.dataType().simpleString());
    }
    return out;
  }
}
