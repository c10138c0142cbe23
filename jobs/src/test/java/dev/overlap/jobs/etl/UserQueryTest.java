package dev.overlap.jobs.etl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.jobs.Main;
import dev.overlap.jobs.TestSessions;
import dev.overlap.jobs.cli.JobArgs;
import dev.overlap.jobs.cli.JobSummary;
import dev.overlap.jobs.cli.UsageException;
import dev.overlap.jobs.delta.JobInput;
import dev.overlap.jobs.tpch.TpchGenerate;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code etl --sql}: a user's query over the input as a view, written as Parquet, equal to Spark's
 * own plan's answer, the summary naming the stage the SQL compiler ran (through its CPU
 * implementation here: {@code spark.overlap.sql.withoutGpu}).
 */
class UserQueryTest {
  @TempDir static Path tmp;
  static SparkSession spark;
  static String lineitem;

  private static final String Q1 =
      "SELECT l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice * (1 -"
          + " l_discount) * (1 + l_tax)), avg(l_discount), count(*) FROM lineitem WHERE"
          + " l_shipdate <= date '1998-12-01' - interval '90' day GROUP BY l_returnflag,"
          + " l_linestatus";

  @BeforeAll
  static void start() {
    spark =
        TestSessions.withPlugin(
            "local[2]",
            "spark.sql.shuffle.partitions",
            "4",
            "spark.overlap.sql.withoutGpu",
            "true");
    String data = tmp.resolve("tpch").toString();
    TpchGenerate.run(
        spark,
        Main.DEFAULT_SCALE,
        data,
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
        false);
    lineitem = data + "/lineitem";
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  @Test
  void aUsersQueryRunsThroughTheCompilerAndEqualsSpark() {
    String out = tmp.resolve("q1").toString();
    JobSummary summary = new JobSummary("etl");
    long rows = UserQuery.run(spark, JobInput.parquet(lineitem), out, Q1, "lineitem", 1, summary);
    List<String> got = sorted(spark.read().parquet(out).collectAsList());
    spark.conf().set("spark.overlap.sql.enabled", "false");
    List<String> want;
    try {
      want = sorted(spark.sql(Q1).collectAsList());
    } finally {
      spark.conf().unset("spark.overlap.sql.enabled");
    }
    assertEquals(want, got);
    assertEquals(want.size(), rows);
    String text = summary.render(rows, 2);
    assertTrue(text.contains("Overlap stages") && text.contains("1: partial aggregate"), text);
  }

  @Test
  void aQueryNamingAMissingColumnIsRefusedInOneLine() {
    UsageException e = refused("SELECT l_nope FROM lineitem");
    assertTrue(
        e.getMessage().startsWith("the query (--sql or --query) cannot run: ")
            && e.getMessage().contains("l_nope")
            && e.getMessage().contains("l_returnflag")
            && !e.getMessage().contains("\n"),
        e.getMessage());
  }

  @Test
  void aCommandIsRefusedBeforeItRuns() {
    UsageException e = refused("DROP VIEW lineitem");
    assertEquals(
        "the query (--sql or --query) is a command, not a query: give a SELECT", e.getMessage());
    assertTrue(spark.catalog().tableExists("lineitem"), "the command ran");
  }

  @Test
  void aQueryAndATextAtOnceAreRefused() {
    // The command's check runs as its arguments are parsed, before Spark starts.
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> JobArgs.parse("etl", "--sql", "SELECT 1", "--query", "q.sql"));
    assertEquals("give --sql or --query, not both", e.getMessage());
  }

  /** What etl says of {@code sql} over the input as the view {@code lineitem}. */
  private static UsageException refused(String sql) {
    return assertThrows(
        UsageException.class,
        () ->
            UserQuery.run(
                spark,
                JobInput.parquet(lineitem),
                tmp.resolve("refused").toString(),
                sql,
                "lineitem",
                1,
                new JobSummary("etl")));
  }

  private static List<String> sorted(List<Row> rows) {
    return rows.stream().map(Row::toString).sorted().toList();
  }
}
