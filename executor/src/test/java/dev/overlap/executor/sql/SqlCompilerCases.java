package dev.overlap.executor.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Supplier;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The SQL compiler's cases, each a query run in a real session with the plugin in {@code
 * spark.plugins} and nothing else set for SQL: the part the compiler takes must show in the plan as
 * an {@code OverlapStage}, and every answer must equal Spark's own plan's (the compiler turned off
 * for the same query), in both ANSI settings. {@link SqlCompilerTest} runs them without a GPU,
 * {@link SqlCompilerGpuTest} on one.
 */
abstract class SqlCompilerCases {
  private static SparkSession spark;
  private static Path dir;

  /** Writes the cases' table with {@code session}, which the cases then use. */
  static void startWith(SparkSession session) throws Exception {
    spark = session;
    dir = Files.createTempDirectory("sql-compiler");
    CompilerTable.write(spark, dir.resolve("t").toString());
    spark.read().parquet(dir.resolve("t").toString()).createOrReplaceTempView("t");
  }

  static SparkSession spark() {
    return spark;
  }

  /** The query's rows, sorted, with the compiler on or off; and whether the plan ran a stage. */
  private static Result run(String sql, boolean compiler) {
    return run(() -> spark.sql(sql), compiler);
  }

  private static Result run(Supplier<Dataset<Row>> query, boolean compiler) {
    spark.conf().set("spark.overlap.sql.enabled", String.valueOf(compiler));
    try {
      Dataset<Row> df = query.get();
      List<String> rows = df.collectAsList().stream().map(Row::toString).sorted().toList();
      String plan = df.queryExecution().executedPlan().toString();
      return new Result(rows, plan.contains("OverlapStage"), plan);
    } finally {
      spark.conf().unset("spark.overlap.sql.enabled");
    }
  }

  private record Result(List<String> rows, boolean staged, String plan) {}

  private static void assertTakenAndEqual(String sql) {
    assertTakenAndEqual(() -> spark.sql(sql), sql);
  }

  private static void assertTakenAndEqual(Supplier<Dataset<Row>> query, String what) {
    Result off = run(query, false);
    Result on = run(query, true);
    assertFalse(off.staged(), "the compiler off ran a stage");
    assertTrue(on.staged(), "not taken: " + what + "\n" + on.plan());
    assertEquals(off.rows(), on.rows(), what);
  }

  @ParameterizedTest
  @ValueSource(strings = {"true", "false"})
  void tpchQ1ShapeEqualsSpark(String ansi) {
    spark.conf().set("spark.sql.ansi.enabled", ansi);
    assertTakenAndEqual(
        "SELECT rf, ls, sum(q), sum(e), sum(e * (1 - d)), sum(e * (1 - d) * (1 + t)),"
            + " avg(q), avg(e), avg(d), count(*) FROM t"
            + " WHERE sd <= date '1998-12-01' - interval '90' day GROUP BY rf, ls");
    spark.conf().unset("spark.sql.ansi.enabled");
  }

  @Test
  void theDataFrameApisQ1IsTakenToo() {
    Supplier<Dataset<Row>> q1 =
        () -> {
          Dataset<Row> t = spark.table("t");
          Column disc = t.col("e").multiply(functions.lit(1).minus(t.col("d")));
          return t.where(t.col("sd").leq(functions.lit(java.sql.Date.valueOf("1998-09-02"))))
              .groupBy("rf", "ls")
              .agg(
                  functions.sum("q"),
                  functions.sum(disc),
                  functions.sum(disc.multiply(functions.lit(1).plus(t.col("t")))),
                  functions.avg("d"),
                  functions.count(functions.lit(1)));
        };
    assertTakenAndEqual(q1, "Q1 through the DataFrame API");
  }

  @Test
  void tpchQ6ShapeEqualsSpark() {
    assertTakenAndEqual(
        "SELECT sum(e * d) AS revenue FROM t WHERE sd >= date '1994-01-01'"
            + " AND sd < date '1994-01-01' + interval '1' year"
            + " AND d BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND q < 24");
  }

  @Test
  void withoutAdaptiveExecutionTheStageIsTakenToo() {
    spark.conf().set("spark.sql.adaptive.enabled", "false");
    try {
      assertTakenAndEqual("SELECT ls, sum(e * (1 - d)), count(d) FROM t WHERE q < 24 GROUP BY ls");
    } finally {
      spark.conf().unset("spark.sql.adaptive.enabled");
    }
  }

  @Test
  void withoutAdaptiveExecutionTheStageShowsInTheExplainedPlanBeforeItRuns() {
    spark.conf().set("spark.sql.adaptive.enabled", "false");
    try {
      String plan =
          spark
              .sql("SELECT rf, count(*) FROM t WHERE q < 10 GROUP BY rf")
              .queryExecution()
              .explainString(org.apache.spark.sql.execution.ExplainMode.fromString("simple"));
      assertTrue(plan.contains("OverlapStage"), plan);
    } finally {
      spark.conf().unset("spark.sql.adaptive.enabled");
    }
  }

  @Test
  void countsMinMaxAndLongSumsEqualSpark() {
    assertTakenAndEqual(
        "SELECT ls, count(*), count(x), count(rf), min(rf), max(rf), min(sd), max(sd),"
            + " min(e), max(i), sum(i) FROM t GROUP BY ls");
    // Without ANSI a bigint sum wraps as Java's does, in any order.
    spark.conf().set("spark.sql.ansi.enabled", "false");
    try {
      assertTakenAndEqual("SELECT ls, sum(id), sum(i * 3) FROM t GROUP BY ls");
    } finally {
      spark.conf().unset("spark.sql.ansi.enabled");
    }
  }

  @Test
  void logicAndNullsEqualSpark() {
    assertTakenAndEqual(
        "SELECT rf, count(*), sum(q) FROM t WHERE (rf IN ('A', 'C') OR d IS NULL)"
            + " AND NOT (ls <=> 'G') AND sd IS NOT NULL GROUP BY rf");
  }

  @ParameterizedTest
  @ValueSource(strings = {"true", "false"})
  void conditionalsStringMatchesAndDatePartsEqualSpark(String ansi) {
    spark.conf().set("spark.sql.ansi.enabled", ansi);
    // Integer negation and abs are taken where Spark wraps (ANSI off); under ANSI, -128's fails.
    String integers = ansi.equals("true") ? "" : " max(abs(bt)), min(-bt), sum(-i),";
    try {
      assertTakenAndEqual(
          "SELECT year(sd), count(*), sum(CASE WHEN rf = 'A' THEN e WHEN d IS NULL THEN -q END),"
              + integers
              + " sum(IF(s LIKE 'ab%', q, 0)), sum(coalesce(d, t, 0)), max(month(od)),"
              + " min(dayofweek(od)), max(dayofmonth(sd)), max(date_add(sd, i)),"
              + " min(date_sub(od, bt)), count(IF(s LIKE '%rld', 1, NULL)), min(coalesce(rf, ls)),"
              + " sum(abs(e - 30)) FROM t"
              + " WHERE (contains(s, 'eak') OR s LIKE '%o w%' OR endswith(s, 'z') OR s = '')"
              + " AND year(od) < 2200 GROUP BY year(sd)");
    } finally {
      spark.conf().unset("spark.sql.ansi.enabled");
    }
  }

  @Test
  void floatingPointComparisonsFollowSparksNaNOrder() {
    for (String where :
        List.of(
            "f = CAST('NaN' AS DOUBLE)",
            "f > 0",
            "f <= CAST('NaN' AS DOUBLE)",
            "f < CAST('NaN' AS DOUBLE)",
            "f >= x",
            "f <=> -0.0D",
            "NOT (f <> 0.0D)",
            "f IN (0.0D, CAST('NaN' AS DOUBLE), NULL)",
            "f + 1.0D > x * 0.5D",
            "x / i > 2.5D")) {
      assertTakenAndEqual(
          "SELECT ls, count(*), sum(q), count(f) FROM t WHERE " + where + " GROUP BY ls");
    }
  }

  @Test
  void aFilterNoRowPassesGivesSparksOneRow() {
    assertTakenAndEqual("SELECT count(*), sum(e), avg(d), min(rf) FROM t WHERE q > 1000");
  }

  @Test
  void productsPastTheTypesBoundAreLeftToSparksOwnRules() {
    // b * b is capped at decimal(38, 0); the batch's values pass it, so the CPU computes it and
    // Spark's rules decide: null without ANSI.
    spark.conf().set("spark.sql.ansi.enabled", "false");
    assertTakenAndEqual("SELECT ls, sum(b * b), count(*) FROM t GROUP BY ls");
    // A running sum of h passes decimal(38, 0) in some order: Spark's partial nulls it.
    assertTakenAndEqual("SELECT ls, sum(h), avg(h) FROM t GROUP BY ls");
    spark.conf().unset("spark.sql.ansi.enabled");
  }

  @Test
  void floatingPointSumsAreLeftToSpark() {
    String sql = "SELECT ls, sum(x), avg(x) FROM t GROUP BY ls";
    Result off = run(sql, false);
    Result on = run(sql, true);
    assertFalse(on.staged(), "taken, though a double sum depends on the order of adding");
    assertEquals(off.rows(), on.rows());
  }

  /**
   * Random queries ({@link RandomQueries}), {@code overlap.sql.queries} of them (6 by default), in
   * both ANSI settings: each taken or not, its answer, or its error's class, equals Spark's.
   */
  @ParameterizedTest
  @ValueSource(strings = {"true", "false"})
  void randomQueriesEqualSpark(String ansi) {
    int count = Integer.getInteger("overlap.sql.queries", 6);
    spark.conf().set("spark.sql.ansi.enabled", ansi);
    int taken = 0;
    try {
      RandomQueries queries = new RandomQueries(ansi.equals("true") ? 1 : 2);
      for (int i = 0; i < count; i++) {
        String sql = queries.next();
        Object off = outcome(sql, false);
        Object on = outcome(sql, true);
        if (on instanceof Result r && r.staged()) {
          taken++;
        }
        assertEquals(rowsOrError(off), rowsOrError(on), "query " + i + ": " + sql);
      }
    } finally {
      spark.conf().unset("spark.sql.ansi.enabled");
    }
    System.out.printf("random queries, ansi=%s: %d of %d taken%n", ansi, taken, count);
    assertTrue(taken > 0, "no random query was taken");
  }

  /** The query's result, or its error's class. */
  private static Object outcome(String sql, boolean compiler) {
    try {
      return run(sql, compiler);
    } catch (RuntimeException e) {
      Throwable c = e;
      while (c.getCause() != null && !(c instanceof org.apache.spark.SparkThrowable)) {
        c = c.getCause();
      }
      return c instanceof org.apache.spark.SparkThrowable t
          ? "error " + t.getCondition()
          : "error " + c.getClass().getName();
    }
  }

  private static Object rowsOrError(Object o) {
    return o instanceof Result r ? r.rows() : o;
  }

  @Test
  void whatItDoesNotTakeRunsAsSparkPlansIt() {
    String sql = "SELECT upper(rf), sum(e / 3) FROM t GROUP BY upper(rf)";
    Result off = run(sql, false);
    Result on = run(sql, true);
    assertFalse(on.staged(), "taken, though upper and decimal division are not built");
    assertEquals(off.rows(), on.rows());
  }
}
