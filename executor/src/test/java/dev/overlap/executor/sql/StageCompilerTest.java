package dev.overlap.executor.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.testing.LocalSession;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.aggregate.BaseAggregateExec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What the SQL compiler takes and why it leaves the rest, on Spark's physical plans before their
 * preparations (no query runs): the reason names the expression at fault.
 */
class StageCompilerTest {
  private static SparkSession spark;

  @BeforeAll
  static void start() throws Exception {
    spark = LocalSession.start("local[1]", "stage-compiler", "spark.ui.enabled", "false");
    Path dir = Files.createTempDirectory("stage-compiler");
    spark
        .sql(
            "SELECT CAST(id AS DECIMAL(12,2)) AS e, CAST(id AS INT) AS i, id * 0.5D AS x,"
                + " CAST(id AS STRING) AS s, DATE '2000-01-01' AS d FROM range(10)")
        .write()
        .parquet(dir.resolve("t").toString());
    spark.read().parquet(dir.resolve("t").toString()).createOrReplaceTempView("t");
    spark
        .read()
        .parquet(dir.resolve("t").toString())
        .write()
        .partitionBy("i")
        .parquet(dir.resolve("parted").toString());
    spark.read().parquet(dir.resolve("parted").toString()).createOrReplaceTempView("parted");
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  /** The compiler's verdict on the query's partial aggregate: null when taken, else why not. */
  private static String verdict(String sql) {
    SparkPlan plan = spark.sql(sql).queryExecution().sparkPlan();
    List<StageCompiler.Compiled> found = new ArrayList<>();
    plan.foreach(
        p -> {
          if (p instanceof BaseAggregateExec a) {
            StageCompiler.Compiled c = StageCompiler.compile(a);
            if (c != null) {
              found.add(c);
            }
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
    assertEquals(1, found.size(), "partial aggregates in " + plan);
    return found.get(0).why();
  }

  @Test
  void aTpchShapedAggregateIsTaken() {
    assertNull(
        verdict(
            "SELECT s, sum(e * (1 - e)), avg(e), sum(i), count(*), min(d) FROM t"
                + " WHERE d <= DATE '2001-01-01' AND s IN ('1', '2') GROUP BY s"));
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "SELECT sum(x) FROM t | floating-point sums depend on the order of adding",
        "SELECT upper(s), count(*) FROM t GROUP BY upper(s) | expression upper is not built yet",
        "SELECT sum(e / 3) FROM t | is not built yet",
        "SELECT count(*) FROM t WHERE s LIKE 'a_%' | expression like is not built yet",
        "SELECT sum(CAST(e AS INT)) FROM t | a cast from decimal(12,2) to int is not built yet",
        "SELECT sum(i) FROM parted | partition columns",
        "SELECT max(x) FROM t | min and max of floating-point values",
        "SELECT avg(i) FROM t | Spark sums in double",
        "SELECT sum(CAST(i AS BIGINT)) FROM t | under ANSI",
      })
  void whatIsLeftSaysWhy(String sql, String why) {
    String got = verdict(sql);
    assertNotNull(got, "taken: " + sql);
    assertTrue(got.contains(why), got);
  }

  @Test
  void integerArithmeticIsTakenOnlyWithoutAnsi() {
    String sql = "SELECT sum(i + 1) FROM t";
    spark.conf().set("spark.sql.ansi.enabled", "true");
    assertTrue(verdict(sql).contains("overflow checks"));
    spark.conf().set("spark.sql.ansi.enabled", "false");
    assertNull(verdict(sql));
    spark.conf().unset("spark.sql.ansi.enabled");
  }
}
