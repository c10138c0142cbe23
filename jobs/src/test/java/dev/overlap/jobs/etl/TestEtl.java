package dev.overlap.jobs.etl;

import dev.overlap.executor.api.PipelineReport;
import dev.overlap.jobs.cli.JobSummary;
import dev.overlap.jobs.delta.JobInput;
import java.util.function.Supplier;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * etl's queries and its run as the tests of any package call them: the input checked as the job
 * checks it ({@link EtlShape#of}), the overlap engine's queries, one run of each.
 */
public final class TestEtl {
  private TestEtl() {}

  /**
   * The overlap engine's Q1.
   *
   * @throws dev.overlap.jobs.cli.UsageException before any work when {@code lineitem} lacks a
   *     column etl reads or has one of a type etl cannot use
   */
  public static Dataset<Row> q1(Dataset<Row> lineitem, PipelineReport report) {
    return KernelQueries.q1(lineitem, EtlShape.of(lineitem), report);
  }

  /**
   * The overlap engine's Q1 planned, not run: the supplier runs its kernels' stage, as etl's Q1
   * phase does, and returns the result (a local Dataset).
   */
  public static Supplier<Dataset<Row>> plannedQ1(Dataset<Row> lineitem, PipelineReport report) {
    return KernelQueries.planQ1(lineitem, EtlShape.of(lineitem), report)::run;
  }

  /**
   * The overlap engine's Q6.
   *
   * @throws dev.overlap.jobs.cli.UsageException as {@link #q1} does
   */
  public static Dataset<Row> q6(Dataset<Row> lineitem, PipelineReport report) {
    return KernelQueries.q6(lineitem, EtlShape.of(lineitem), report);
  }

  /** etl with the overlap engine, each query once; returns the rows written. */
  public static long run(SparkSession spark, String input, String output, JobSummary summary) {
    return EtlJob.run(spark, JobInput.parquet(input), output, EtlJob.OVERLAP, 1, summary);
  }
}
