package dev.overlap.jobs.delta;

import dev.overlap.jobs.cli.InputFormat;
import dev.overlap.jobs.cli.JobArgs;
import dev.overlap.jobs.cli.JobSummary;
import java.util.OptionalLong;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * What {@code --input} names and how a job reads it: Parquet files (the default), or a Delta Lake
 * table ({@code --format delta}) at its latest version or at {@code --version N} ({@link
 * DeltaInput}). Only a Delta input loads delta-spark's classes.
 *
 * @param path the input as given, or the default data's {@code lineitem}
 * @param delta whether it is read as a Delta table
 * @param version the table's version to read; empty for its latest
 */
public record JobInput(String path, boolean delta, OptionalLong version) {
  /** Parquet files at {@code path}, as the jobs read an input without {@code --format}. */
  public static JobInput parquet(String path) {
    return new JobInput(path, false, OptionalLong.empty());
  }

  /** How the job {@code a} reads {@code path}, its input ({@link InputFormat}). */
  public static JobInput of(JobArgs a, String path) {
    return new JobInput(path, InputFormat.isDelta(a), InputFormat.version(a));
  }

  /**
   * Refuses, before Spark starts, a Delta input that the session could not read: delta-spark's
   * classes missing, or its session extension not in {@code spark.sql.extensions}.
   */
  public void checkSetup(SparkConf conf) {
    if (delta) {
      ClassLoader loader = Thread.currentThread().getContextClassLoader();
      DeltaSetup.check(
          key -> conf.get(key, null), loader != null ? loader : JobInput.class.getClassLoader());
    }
  }

  /**
   * The input as a DataFrame: Spark's Parquet reader over {@link #path}, or the Delta table read as
   * {@link DeltaInput} says, with a summary line saying how.
   */
  public Dataset<Row> read(SparkSession spark, JobSummary summary) {
    if (!delta) {
      return spark.read().parquet(path);
    }
    DeltaInput in = DeltaInput.read(spark, path, version);
    summary.note("Delta table", in.line());
    return in.rows();
  }
}
