package dev.overlap.jobs.etl;

import dev.overlap.jobs.cli.JobSummary;
import dev.overlap.jobs.cli.PhaseProgress;
import dev.overlap.jobs.cli.UsageException;
import dev.overlap.jobs.delta.JobInput;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.util.QueryExecutionListener;

/**
 * {@code etl --sql TEXT} (or {@code --query FILE}): a user's own query over the input, which is
 * registered as a temporary view ({@code --table}, default {@code t}); its result is written as
 * Parquet to the output folder and its first rows printed. With the plugin loaded, the SQL compiler
 * runs the parts of the plan it takes on Overlap's pipeline; the summary says how many and what
 * they were.
 */
final class UserQuery {
  private static final Pattern STAGE = Pattern.compile("OverlapStage\\[([^\\]]*)\\]");

  private UserQuery() {}

  static long run(
      SparkSession spark,
      JobInput input,
      String output,
      String sql,
      String table,
      int repeat,
      JobSummary summary) {
    long t = System.nanoTime();
    input.read(spark, summary).createOrReplaceTempView(table);
    Dataset<Row> q = analysed(spark, sql, table);
    t = summary.phaseSince("plan", t, "input listed, the query analysed");
    Plans plans = new Plans();
    spark.listenerManager().register(plans);
    long rows;
    try {
      try (PhaseProgress p = PhaseProgress.start(spark, "etl query")) {
        q.write().mode("overwrite").parquet(output);
      }
      t = summary.phaseSince("query", t, "the query run and its result written as Parquet");
      summary.note("Overlap stages", plans.stages());
    } finally {
      spark.listenerManager().unregister(plans);
    }
    Dataset<Row> written = spark.read().parquet(output);
    rows = written.count();
    System.out.println("Query result (" + rows + " rows):");
    written.show(20, false);
    if (repeat > 1) {
      try (PhaseProgress p = PhaseProgress.start(spark, "etl query again")) {
        // Run to the end and written nowhere, as the first run was run and written as Parquet.
        summary.note(
            "query again",
            WarmRuns.median(
                repeat - 1, () -> spark.sql(sql).write().format("noop").mode("overwrite").save()));
      }
    }
    return rows;
  }

  /**
   * The query, analysed: a query Spark cannot parse or resolve is refused in one line, before any
   * job, naming what Spark named and the view's columns.
   */
  private static Dataset<Row> analysed(SparkSession spark, String sql, String table) {
    try {
      // A command (DROP, INSERT...) runs as it is analysed: refused before it does.
      if (((org.apache.spark.sql.classic.SparkSession) spark)
              .sessionState()
              .sqlParser()
              .parsePlan(sql)
          instanceof org.apache.spark.sql.catalyst.plans.logical.Command) {
        throw new UsageException(
            "the query (--sql or --query) is a command, not a query: give a SELECT");
      }
      return spark.sql(sql);
    } catch (Exception e) { // AnalysisException, which Java sees as checked
      if (!(e instanceof AnalysisException a)) {
        throw e instanceof RuntimeException r ? r : new IllegalStateException(e);
      }
      String first = a.getMessage().lines().findFirst().orElse("");
      throw new UsageException(
          "the query (--sql or --query) cannot run: "
              + first
              + "; the input is the view '"
              + table
              + "' with columns "
              + String.join(", ", spark.table(table).columns()),
          e);
    }
  }

  /** The executed plans of the session's queries, as Spark's listener bus reports them. */
  private static final class Plans implements QueryExecutionListener {
    private final List<String> plans = new CopyOnWriteArrayList<>();

    @Override
    public void onSuccess(String funcName, QueryExecution qe, long durationNs) {
      // The write's own, not a view's or Delta's snapshot's that the bus delivers late.
      String plan = qe.executedPlan().toString();
      if (plan.contains("InsertIntoHadoopFsRelationCommand")) {
        plans.add(plan);
      }
    }

    @Override
    public void onFailure(String funcName, QueryExecution qe, Exception exception) {}

    /** What the compiled stages were, or that there was none; waits briefly for the bus. */
    String stages() {
      long until = System.nanoTime() + 5_000_000_000L;
      while (plans.isEmpty() && System.nanoTime() < until) {
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      List<String> found = new ArrayList<>();
      for (String p : plans) {
        Matcher m = STAGE.matcher(p);
        while (m.find()) {
          found.add(m.group(1));
        }
      }
      return found.isEmpty()
          ? "none: Spark ran the whole plan (spark.overlap.sql.explain=NOT_ON_GPU logs why)"
          : found.size() + ": " + String.join("; ", found);
    }
  }
}
