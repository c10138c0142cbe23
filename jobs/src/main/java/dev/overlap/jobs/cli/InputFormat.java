package dev.overlap.jobs.cli;

import java.util.List;
import java.util.OptionalLong;

/**
 * How a job reads {@code --input}: as Parquet files (the default), or with {@code --format delta}
 * as a Delta Lake table, at its latest version or at {@code --version N}. The checks of those
 * options, at parse; reading the input is the job's ({@code delta.JobInput}).
 */
public final class InputFormat {
  public static final String PARQUET = "parquet";
  public static final String DELTA = "delta";
  static final List<String> FORMATS = List.of(PARQUET, DELTA);

  private InputFormat() {}

  /** Whether {@code a} reads its input as a Delta table. */
  public static boolean isDelta(JobArgs a) {
    return a.get("--format").orElse(PARQUET).equals(DELTA);
  }

  /** The Delta table's version {@code a} reads; empty for its latest. */
  public static OptionalLong version(JobArgs a) {
    return a.get("--version")
        .map(v -> OptionalLong.of(versionNumber(v)))
        .orElse(OptionalLong.empty());
  }

  /**
   * Refuses an unknown {@code --format}, a {@code --version} that is no version number or comes
   * without {@code --format delta}, and {@code --format delta} without {@code --input}.
   */
  static void check(JobArgs a) {
    String format = a.oneOf("--format", FORMATS);
    if (a.has("--version") && !format.equals(DELTA)) {
      throw new UsageException(
          "--version reads a Delta table as it was at that version: give --format delta too");
    }
    if (format.equals(DELTA) && !a.has("--input")) {
      throw new UsageException(
          "--format delta reads the Delta table that --input names: give --input TABLE_FOLDER");
    }
    a.get("--version").ifPresent(InputFormat::versionNumber);
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
}
