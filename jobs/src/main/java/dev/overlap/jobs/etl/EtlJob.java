package dev.overlap.jobs.etl;

import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.trace.Diagnostics;
import dev.overlap.jobs.cli.JobSummary;
import dev.overlap.jobs.cli.PhaseProgress;
import dev.overlap.jobs.cli.StagedOutput;
import dev.overlap.jobs.delta.JobInput;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;

/**
 * TPC-H Q1 and Q6 over {@code lineitem} (Parquet, or a Delta table: {@link JobInput}): filters and
 * derived columns run as GPU kernels partition by partition with partial aggregates per batch, in
 * one Spark stage; the driver adds the partials up ({@link KernelQueries}). The money columns may
 * be decimals of any precision and scale, int, long, float or double, with nulls ({@link
 * EtlShape}); result types are those Spark SQL gives the same queries over the same input, read
 * from Spark's analysis of them, so results compare equal (doubles up to the order of summation).
 *
 * <p>With the {@value #SPARK_SQL} engine ({@code --engine spark-sql}) the same queries run as Spark
 * SQL's own aggregations over the same input ({@link SqlQueries}) and write the same outputs, so
 * that the engines can be compared; with the RAPIDS Accelerator in {@code spark.plugins}, it runs
 * them on the GPU, and the summary says whether it did ({@link RapidsAccelerator}).
 */
public final class EtlJob {
  /** The plan phase's steps: to the run's log only (conf/log4j2.properties). */
  private static final Logger LOG = Diagnostics.logger(EtlJob.class);

  /** The default engine: the queries' per-batch work runs as Overlap's kernels. */
  public static final String OVERLAP = "overlap";

  /** The queries as Spark SQL's own aggregations, for comparison with {@link #OVERLAP}. */
  public static final String SPARK_SQL = "spark-sql";

  private static final String KERNELS = "scan and kernels in one stage, partials added up here";
  private static final String SPARKS = "Spark SQL's scan and aggregation";

  private EtlJob() {}

  /**
   * Runs both queries with {@code engine}, {@value #OVERLAP} or {@value #SPARK_SQL}, prints them,
   * writes them under {@code output} ({@code q1} and {@code q6}, the same columns, types and values
   * from either engine); returns the rows written. The summary says which engine ran.
   */
  public static long run(
      SparkSession spark,
      JobInput input,
      String output,
      String engine,
      int repeat,
      JobSummary summary) {
    long t = System.nanoTime();
    // The plan phase's steps, in the log: where its time goes (with RAPIDS beside, say).
    long[] steps = new long[6];
    Dataset<Row> lineitem = input.read(spark, summary);
    steps[0] = System.nanoTime();
    EtlShape shape = EtlShape.of(lineitem); // refuses unusable input before any work
    steps[1] = System.nanoTime();
    Dataset<Row> q1 = null;
    Dataset<Row> q6 = null;
    KernelQueries.Planned k1 = null;
    KernelQueries.Planned k6 = null;
    PipelineReport r1 = null;
    PipelineReport r6 = null;
    if (engine.equals(SPARK_SQL)) {
      q1 = SqlQueries.q1(lineitem, shape);
      steps[2] = System.nanoTime();
      q6 = SqlQueries.q6(lineitem, shape);
    } else if (engine.equals(OVERLAP)) {
      r1 = PipelineReport.create(spark);
      k1 = KernelQueries.planQ1(lineitem, shape, r1);
      steps[2] = System.nanoTime();
      r6 = PipelineReport.create(spark);
      k6 = KernelQueries.planQ6(lineitem, shape, r6);
    } else {
      throw new IllegalArgumentException("no etl engine '" + engine + "'");
    }
    steps[3] = System.nanoTime();
    // With the overlap engine the kernels' input is planned (with the RAPIDS Accelerator, when the
    // session has it): what is left is the driver adding up a few hundred partial rows.
    long rows;
    Runnable restore = engine.equals(OVERLAP) ? RapidsAccelerator.withoutRapids(spark) : () -> {};
    try {
      // Spark SQL's queries run to cached results; the kernels' results are local already.
      q1 = q1 != null ? q1.cache() : null;
      steps[4] = System.nanoTime();
      q6 = q6 != null ? q6.cache() : null;
      steps[5] = System.nanoTime();
      if (r1 != null) {
        summary.add("Q1", r1);
        summary.add("Q6", r6);
      }
      LOG.info(
          "plan phase: input read {} ms, checked {} ms, Q1 planned {} ms, Q6 planned {} ms, Q1"
              + " cached {} ms, Q6 cached {} ms",
          (steps[0] - t) / 1_000_000,
          (steps[1] - steps[0]) / 1_000_000,
          (steps[2] - steps[1]) / 1_000_000,
          (steps[3] - steps[2]) / 1_000_000,
          (steps[4] - steps[3]) / 1_000_000,
          (steps[5] - steps[4]) / 1_000_000);
      t = summary.phaseSince("plan", t, "input listed, its schema read and checked");
      // Each query runs to its cached result on its own, so that its time is its own.
      try (PhaseProgress p = PhaseProgress.start(spark, "etl Q1")) {
        q1 = k1 != null ? k1.run() : q1;
        rows = k1 != null ? q1.collectAsList().size() : q1.count(); // local: no job
      }
      t = summary.phaseSince("Q1", t, k1 != null ? KERNELS : SPARKS);
      try (PhaseProgress p = PhaseProgress.start(spark, "etl Q6")) {
        q6 = k6 != null ? k6.run() : q6;
        rows += k6 != null ? q6.collectAsList().size() : q6.count();
      }
      t = summary.phaseSince("Q6", t, k6 != null ? KERNELS : SPARKS);
      q1.write().mode("overwrite").parquet(output + "/q1");
      StagedOutput.pause("between-tables");
      q6.write().mode("overwrite").parquet(output + "/q6");
      t = summary.phaseSince("write", t, "both results written as Parquet");
      System.out.println("TPC-H Q1 (pricing summary):");
      q1.show(false);
      System.out.println("TPC-H Q6 (forecast revenue change):");
      q6.show(false);
      summary.note("engine", RapidsAccelerator.engineLine(engine, q1, q6));
      if (k1 == null) {
        q1.unpersist(true);
        q6.unpersist(true);
      }
      if (repeat > 1) {
        // After the unpersist: a warm run computes its query, it does not read the cached result.
        try (PhaseProgress p = PhaseProgress.start(spark, "etl Q1 again")) {
          summary.note("Q1 again", WarmRuns.of(spark, lineitem, shape, engine, repeat - 1, true));
        }
        try (PhaseProgress p = PhaseProgress.start(spark, "etl Q6 again")) {
          summary.note("Q6 again", WarmRuns.of(spark, lineitem, shape, engine, repeat - 1, false));
        }
      }
    } finally {
      restore.run();
    }
    return rows;
  }
}
