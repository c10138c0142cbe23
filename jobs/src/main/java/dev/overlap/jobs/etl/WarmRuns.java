package dev.overlap.jobs.etl;

import dev.overlap.executor.api.PipelineReport;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/** etl's {@code --repeat}: its queries run again in the same process, Spark and the JVM warm. */
final class WarmRuns {
  private WarmRuns() {}

  /**
   * Runs Q1 (or Q6) {@code times} more times in this process, each to its result rows, and says how
   * long each run took and their median: the queries' times once Spark and the JVM are warm.
   */
  static String of(
      SparkSession spark,
      Dataset<Row> lineitem,
      EtlShape shape,
      String engine,
      int times,
      boolean first) {
    return median(
        times,
        () -> {
          Dataset<Row> q;
          if (engine.equals(EtlJob.SPARK_SQL)) {
            q = first ? SqlQueries.q1(lineitem, shape) : SqlQueries.q6(lineitem, shape);
          } else {
            q =
                first
                    ? KernelQueries.q1(lineitem, shape, PipelineReport.create(spark))
                    : KernelQueries.q6(lineitem, shape, PipelineReport.create(spark));
          }
          if (q.queryExecution().optimizedPlan().toString().contains("InMemoryRelation")) {
            throw new IllegalStateException(
                "a warm run would read a cached result, not compute it");
          }
          q.collectAsList();
        });
  }

  /**
   * Runs {@code run} {@code times} times and says how long each run took and their median (the
   * middle one; the larger of the two middle ones for an even count).
   */
  static String median(int times, Runnable run) {
    List<Double> secs = new ArrayList<>();
    for (int i = 0; i < times; i++) {
      long t = System.nanoTime();
      run.run();
      secs.add((System.nanoTime() - t) / 1e9);
    }
    List<Double> sorted = new ArrayList<>(secs);
    Collections.sort(sorted);
    StringBuilder sb = new StringBuilder();
    for (double d : secs) {
      sb.append(sb.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.2f", d));
    }
    return String.format(
        Locale.ROOT,
        "%.2f s median of %d warm runs (%s s)",
        sorted.get(sorted.size() / 2),
        times,
        sb);
  }
}
