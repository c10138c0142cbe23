package dev.overlap.jobs.cli;

import dev.overlap.jobs.delta.DeltaInput;
import dev.overlap.jobs.delta.DeltaSetup;
import java.util.List;
import java.util.OptionalLong;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * What {@code --input} names and how a job reads it: Parquet files (the default), or a Delta Lake
 * table ({@code --format delta}) at its latest version or at {@code --version N} ({@link
 * DeltaInput}).
 *
 * @param path the input as given, or the default data's {@code lineitem}
 * @param delta whether it is read as a Delta table
 * @param version the table's version to read; empty for its latest
 */
public record JobInput(String path, boolean delta, OptionalLong version) {
  public static final String PARQUET = "parquet";
  public static final String DELTA = "delta";
  static final List<String> FORMATS = List.of(PARQUET, DELTA);

  /** Parquet files at {@code path}, as the jobs read an input without {@code --format}. */
  public static JobInput parquet(String path) {
    return new JobInput(path, false, OptionalLong.empty());
  }

  /** How the job {@code a} reads {@code path}, its input. */
  public static JobInput of(JobArgs a, String path) {
    check(a);
    OptionalLong version =
        a.get("--version").map(v -> OptionalLong.of(versionNumber(v))).orElse(OptionalLong.empty());
    return new JobInput(path, isDelta(a), version);
  }

  /** Whether {@code a} reads its input as a Delta table. */
  static boolean isDelta(JobArgs a) {
    return a.get("--format").orElse(PARQUET).equals(DELTA);
  }

  /**
   * Refuses an unknown {@code --format}, a {@code --version} that is no version number or comes
   * without {@code --format delta}, and {@code --format delta} without {@code --input}.
   */
  static void check(JobArgs a) {
    String format = a.get("--format").orElse(PARQUET);
    if (!FORMATS.contains(format)) {
      String near = JobArgs.nearest(format, FORMATS);
      throw new UsageException(
          "--format must be "
              + String.join(" or ", FORMATS)
              + ", got '"
              + format
              + "'"
              + (near == null ? "" : "; did you mean " + near + "?"));
    }
    if (a.has("--version") && !format.equals(DELTA)) {
      throw new UsageException(
          "--version reads a Delta table as it was at that version: give --format delta too");
    }
    if (format.equals(DELTA) && !a.has("--input")) {
      throw new UsageException(
          "--format delta reads the Delta table that --input names: give --input TABLE_FOLDER");
    }
    a.get("--version").ifPresent(JobInput::versionNumber);
  }

  private static long versionNumber(String v) {
    try {
      long n = Long.parseLong(v.trim());
      if (n >= 0 && v.trim().equals(v)) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new UsageException(
        "--version must be a whole number of 0 or more (a version of the Delta table), got '"
            + v
            + "'");
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
