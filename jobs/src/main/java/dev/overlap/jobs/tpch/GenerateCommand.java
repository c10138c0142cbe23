package dev.overlap.jobs.tpch;

import dev.overlap.jobs.cli.JobArgs;
import dev.overlap.jobs.cli.JobCommand;
import dev.overlap.jobs.cli.JobPaths;
import dev.overlap.jobs.cli.UsageException;
import java.math.BigDecimal;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code generate --scale SF [--output DIR]}: TPC-H {@code lineitem} and {@code orders} as Parquet
 * ({@link TpchGenerate}), into {@code data/tpch-sf<SF>} by default, refused before any work when
 * the tables would not fit the output's disk.
 */
public final class GenerateCommand implements JobCommand {
  /** The largest TPC-H scale factor the generator defines. */
  static final double MAX_SCALE = 100_000;

  /** Parquet bytes that generate writes per unit of scale factor (lineitem and orders). */
  static final long BYTES_PER_SCALE = 300L << 20;

  @Override
  public String name() {
    return "generate";
  }

  @Override
  public List<String> values() {
    return List.of("--scale", "--output");
  }

  @Override
  public Map<String, String> examples() {
    return Map.of("--scale", "--scale 1");
  }

  @Override
  public void check(JobArgs a) {
    if (!a.has("--scale")) {
      throw new UsageException("generate needs --scale, e.g. --scale 1");
    }
    scale(a);
  }

  @Override
  public boolean readsInput() {
    return false;
  }

  @Override
  public String defaultOutput(JobArgs a) {
    return "data/tpch-sf" + a.get("--scale").orElseThrow();
  }

  @Override
  public Run prepare(JobArgs a, JobPaths paths, String output) {
    double scale = scale(a);
    checkRoom(paths, output, scale);
    return (spark, input, to, summary) -> TpchGenerate.run(spark, scale, to);
  }

  /** {@code --scale}: a TPC-H scale factor, greater than 0 and at most {@value #MAX_SCALE}. */
  static double scale(JobArgs a) {
    String v = a.get("--scale").orElseThrow();
    double sf;
    try {
      sf = Double.parseDouble(v);
    } catch (NumberFormatException e) {
      sf = Double.NaN;
    }
    if (!(sf > 0 && sf <= MAX_SCALE)) {
      throw new UsageException(
          String.format(
              Locale.ROOT,
              "--scale must be a number greater than 0 and at most %.0f (e.g. 0.01, 1, 10), got '%s'",
              MAX_SCALE,
              v));
    }
    if (TpchGenerate.orderCount(sf, TpchGenerate.parts(sf)) == 0) {
      throw new UsageException(
          "--scale "
              + v
              + " gives tables of 0 rows; the smallest scale that gives rows is "
              + smallestScale()
              + " (SF 0.01 gives 15000 orders)");
    }
    return sf;
  }

  /** The smallest scale factor of one significant digit for which generate writes rows. */
  static String smallestScale() {
    for (int k = 12; k >= 0; k--) {
      for (int m = 1; m <= 9; m++) {
        BigDecimal sf = BigDecimal.valueOf(m).scaleByPowerOfTen(-k);
        double d = sf.doubleValue();
        if (TpchGenerate.orderCount(d, TpchGenerate.parts(d)) > 0) {
          return sf.toPlainString();
        }
      }
    }
    return "1";
  }

  /** Refuses a scale factor whose tables would not fit the output's local file system. */
  static void checkRoom(JobPaths paths, String output, double scale) {
    JobPaths.FreeSpace free = paths.freeSpace(output);
    long need = (long) Math.ceil(scale * BYTES_PER_SCALE);
    if (free.bytes() >= 0 && need > free.bytes()) {
      throw new UsageException(
          String.format(
              Locale.ROOT,
              "--scale %s needs about %.1f GB for its Parquet files, but %s has %.1f GB free;"
                  + " use a smaller --scale or an --output on a larger disk",
              fmt(scale),
              need / 1e9,
              free.where(),
              free.bytes() / 1e9));
    }
  }

  private static String fmt(double d) {
    return d == Math.rint(d) ? String.valueOf((long) d) : String.valueOf(d);
  }
}
