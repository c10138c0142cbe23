package dev.overlap.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jobs as a user runs them: ./spark-submit.sh generate, etl and features on a tiny TPC-H
 * dataset, each in its own JVM, then their Parquet outputs checked against Spark SQL written here,
 * independently of the jobs' code. The kernels run on the GPU where this machine has one and on the
 * CPU otherwise; the summary's figures are checked for the path it says the run took.
 */
public class JobsEndToEndIT {
  @TempDir static Path tmp;
  static SparkSession spark;
  static String lineitem;

  @BeforeAll
  static void generate() throws Exception {
    Shell.Result r = Shell.submit(tmp, "generate", "--scale", "0.01", "--output", "tpch");
    assertEquals(0, r.exitCode(), r.output());
    assertTrue(r.output().contains("100%"), "no progress shown:\n" + r.output());
    lineitem = tmp.resolve("tpch/lineitem").toString();
    spark = TestSessions.local("local[2]");
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  @Test
  void generateIsDeterministic() throws Exception {
    Shell.Result r = Shell.submit(tmp, "generate", "--scale", "0.01", "--output", "again");
    assertEquals(0, r.exitCode(), r.output());
    Dataset<Row> a = spark.read().parquet(lineitem);
    Dataset<Row> b = spark.read().parquet(tmp.resolve("again/lineitem").toString());
    assertEquals(60175, a.count());
    assertEquals(0, a.exceptAll(b).count() + b.exceptAll(a).count());
  }

  @Test
  void etlMatchesSparkSql() throws Exception {
    Shell.Result r = Shell.submit(tmp, "etl", "--input", lineitem, "--output", "etl");
    assertEquals(0, r.exitCode(), r.output());
    assertTrue(r.output().contains("==== overlap etl ===="), r.output());
    assertPathTaken(r.output(), "Q1", "Q6");
    assertTrue(r.output().contains("\nengine         overlap (Overlap's kernels"), r.output());
    assertEtlOutput("etl");
  }

  /** etl's output in {@code dir}: Q1 and Q6 as Spark SQL gives them over lineitem. */
  private static void assertEtlOutput(String dir) {
    spark.read().parquet(lineitem).createOrReplaceTempView("lineitem");
    Dataset<Row> q1 =
        spark.sql(
            "select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty,"
                + " sum(l_extendedprice) as sum_base_price,"
                + " sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,"
                + " sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,"
                + " avg(l_quantity) as avg_qty, avg(l_extendedprice) as avg_price,"
                + " avg(l_discount) as avg_disc, count(*) as count_order"
                + " from lineitem where l_shipdate <= date '1998-12-01' - interval '90' day"
                + " group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus");
    Dataset<Row> got = spark.read().parquet(tmp.resolve(dir + "/q1").toString());
    assertEquals(typesOf(q1), typesOf(got));
    assertEquals(q1.collectAsList(), got.orderBy("l_returnflag", "l_linestatus").collectAsList());
    Dataset<Row> q6 =
        spark.sql(
            "select sum(l_extendedprice * l_discount) as revenue from lineitem"
                + " where l_shipdate >= date '1994-01-01'"
                + " and l_shipdate < date '1994-01-01' + interval '1' year"
                + " and l_discount between 0.06 - 0.01 and 0.06 + 0.01 and l_quantity < 24");
    Dataset<Row> got6 = spark.read().parquet(tmp.resolve(dir + "/q6").toString());
    assertEquals(typesOf(q6), typesOf(got6));
    assertEquals(q6.collectAsList(), got6.collectAsList());
  }

  @Test
  void featuresMatchSparkSql() throws Exception {
    Shell.Result r =
        Shell.submit(
            tmp, "features", "--input", lineitem, "--output", "features", "--vocabulary", "3");
    assertEquals(0, r.exitCode(), r.output());
    assertTrue(
        r.output().matches("(?s).*\\nfirst pass +[0-9.]+ s \\(statistics and vocabularies.*"),
        r.output());
    assertPathTaken(r.output(), "features");
    Dataset<Row> in = spark.read().parquet(lineitem);
    in.createOrReplaceTempView("li");
    List<String> exprs = new ArrayList<>();
    for (String c :
        List.of(
            "l_orderkey",
            "l_partkey",
            "l_suppkey",
            "l_linenumber",
            "l_quantity",
            "l_extendedprice",
            "l_discount",
            "l_tax")) {
      Row s =
          spark
              .sql(
                  "select avg(cast("
                      + c
                      + " as double)), stddev_samp(cast("
                      + c
                      + " as double)) from li")
              .first();
      String x = "coalesce(cast(" + c + " as double), " + s.getDouble(0) + "d)";
      exprs.add("(" + x + " - " + s.getDouble(0) + "d) / " + s.getDouble(1) + "d as " + c + "_std");
      exprs.add("ln(1d + " + x + ") as " + c + "_log1p"); // every TPC-H number is >= 0
      if (hasNulls(c)) { // a column with no missing value when fitted gets neither
        exprs.add(c + " is null as " + c + "_isnull");
        exprs.add(x + " as " + c + "_imputed");
      }
    }
    for (String c : List.of("l_returnflag", "l_linestatus")) {
      exprs.add(vocabIndex(c) + " as " + c + "_idx");
      if (hasNulls(c)) {
        exprs.add(c + " is null as " + c + "_isnull");
        exprs.add("coalesce(" + c + ", '" + mostFrequent(c) + "') as " + c + "_imputed");
      }
    }
    for (String c : List.of("l_shipdate", "l_commitdate", "l_receiptdate")) {
      exprs.add("dayofweek(" + c + ") as " + c + "_dow");
      exprs.add("month(" + c + ") as " + c + "_month");
      if (!hasNulls(c)) {
        continue;
      }
      exprs.add(c + " is null as " + c + "_isnull");
      long meanDay =
          spark
              .sql("select cast(round(avg(unix_date(" + c + "))) as int) from li")
              .first()
              .getInt(0);
      exprs.add("coalesce(" + c + ", date_from_unix_date(" + meanDay + ")) as " + c + "_imputed");
    }
    for (String c : List.of("l_shipinstruct", "l_shipmode", "l_comment")) {
      exprs.add(vocabIndex(c) + " as " + c + "_idx");
      if (hasNulls(c)) {
        exprs.add(c + " is null as " + c + "_isnull");
        exprs.add("coalesce(" + c + ", '" + mostFrequent(c) + "') as " + c + "_imputed");
      }
    }
    Dataset<Row> expected = in.selectExpr(exprs.toArray(new String[0]));
    Dataset<Row> got = spark.read().parquet(tmp.resolve("features").toString());
    List<String> cols = List.of(expected.columns());
    assertEquals(cols.size(), got.columns().length, String.join(",", got.columns()));
    assertTrue(List.of(got.columns()).containsAll(cols), String.join(",", got.columns()));
    List<Row> e = expected.orderBy("l_orderkey_std", "l_linenumber_std").collectAsList();
    List<Row> g =
        got.selectExpr(cols.toArray(new String[0]))
            .orderBy("l_orderkey_std", "l_linenumber_std")
            .collectAsList();
    assertEquals(e.size(), g.size());
    for (int i = 0; i < e.size(); i++) {
      for (int c = 0; c < cols.size(); c++) {
        Object a = e.get(i).get(c);
        Object b = g.get(i).get(c);
        if (a instanceof Double x && b instanceof Double y) {
          assertTrue(
              Math.abs(x - y) <= 1e-9 * Math.max(1.0, Math.abs(x)),
              "row " + i + " " + cols.get(c) + ": " + x + " vs " + y);
        } else {
          assertEquals(a, b, "row " + i + " " + cols.get(c));
        }
      }
    }
  }

  /**
   * Checks the summary against the path it says the run took, which depends on this machine. On the
   * GPU: every step copied batches through the pipeline, none ran CPU tasks, and the pipeline's
   * overlap is measured. On the CPU, which only a machine without a usable GPU may take (no CUDA
   * device is visible): every step ran CPU tasks and none copied a batch. A mixed run fails: a
   * local run has one executor. Returns whether the GPU path ran.
   */
  static boolean assertPathTaken(String output, String... steps) {
    int at = output.indexOf("==== overlap ");
    assertTrue(at >= 0, "no summary:\n" + output);
    String summary = output.substring(at);
    Matcher path = Pattern.compile("(?m)^path +(.+)$").matcher(summary);
    assertTrue(path.find(), "no path line:\n" + summary);
    boolean gpu = path.group(1).equals("GPU");
    if (gpu) {
      for (String step : steps) {
        Matcher m =
            Pattern.compile("(?m)^" + step + " +(\\d+) batches, [0-9.]+ GB copied; busy: ")
                .matcher(summary);
        assertTrue(m.find(), step + " has no GPU line:\n" + summary);
        assertTrue(Long.parseLong(m.group(1)) > 0, summary);
      }
      assertFalse(summary.contains(" tasks on the CPU, "), summary);
      assertTrue(
          Pattern.compile("(?m)^overlap +[0-9.]+ s with two or more of copy, compute and copy back")
              .matcher(summary)
              .find(),
          summary);
    } else {
      assertTrue(path.group(1).startsWith("CPU (no CUDA device is visible"), summary);
      for (String step : steps) {
        Matcher m =
            Pattern.compile("(?m)^" + step + " +(\\d+) tasks on the CPU, ").matcher(summary);
        assertTrue(m.find(), step + " has no CPU line:\n" + summary);
        assertTrue(Long.parseLong(m.group(1)) > 0, summary);
      }
      assertFalse(summary.contains(" batches, "), summary);
    }
    return gpu;
  }

  /** Names and types; Parquet files read back as nullable, so nullability is not compared. */
  private static List<String> typesOf(Dataset<Row> df) {
    List<String> out = new ArrayList<>();
    for (var f : df.schema().fields()) {
      out.add(f.name() + ":" + f.dataType().simpleString());
    }
    return out;
  }

  /** The n most frequent values of column c, most frequent first, ties by value. */
  private static List<String> topValues(String c, int n) {
    List<String> out = new ArrayList<>();
    for (Row r :
        spark
            .sql(
                "select "
                    + c
                    + " from li where "
                    + c
                    + " is not null group by "
                    + c
                    + " order by count(*) desc, "
                    + c
                    + " asc limit "
                    + n)
            .collectAsList()) {
      out.add(r.getString(0));
    }
    return out;
  }

  /** A SQL string literal's body. */
  private static String quoted(String v) {
    return v.replace("\\", "\\\\").replace("'", "\\'");
  }

  /** Whether column {@code c} of the input ({@code li}) has a null: then it gets _isnull. */
  private static boolean hasNulls(String c) {
    return spark.sql("select count(*) - count(" + c + ") from li").first().getLong(0) > 0;
  }

  /** The most frequent value, quoted for a SQL string literal. */
  private static String mostFrequent(String c) {
    return quoted(topValues(c, 1).get(0));
  }

  /** The index of the value among the 3 most frequent (count desc, value asc); else 3. */
  private static String vocabIndex(String c) {
    List<String> top = topValues(c, 3);
    StringBuilder sb = new StringBuilder("case");
    for (int i = 0; i < top.size(); i++) {
      sb.append(" when ")
          .append(c)
          .append(" = '")
          .append(quoted(top.get(i)))
          .append("' then ")
          .append(i);
    }
    return sb.append(" else ").append(top.size()).append(" end").toString();
  }
}
