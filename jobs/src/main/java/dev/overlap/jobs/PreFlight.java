package dev.overlap.jobs;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import java.util.Locale;
import org.apache.hadoop.fs.Path;

/**
 * What {@link Main} checks before Spark starts, so that a mistake costs seconds and changes
 * nothing: the standalone master answers, the input exists and holds data, the output is no mistake
 * ({@link JobPaths}), and generate's tables fit the output's disk. Every refusal is a {@link
 * UsageException}.
 */
final class PreFlight {
  /** Parquet bytes that generate writes per unit of scale factor (lineitem and orders). */
  static final long BYTES_PER_SCALE = 300L << 20;

  private PreFlight() {}

  /**
   * The job's output folder, checked against its input: {@code --output}, else {@code out/<job>}
   * ({@code data/tpch-sf<SF>} for generate), replaced without {@code --overwrite}. What a killed
   * run left beside it is put right first.
   */
  static String output(JobArgs a, JobPaths paths) {
    boolean defaultOutput = !a.has("--output");
    String output =
        a.get("--output")
            .orElse(
                a.job.equals("generate")
                    ? "data/tpch-sf" + a.get("--scale").orElseThrow()
                    : "out/" + a.job);
    // Before anything else looks at the output: put right what a killed run left beside it.
    paths.recover(output);
    List<Path> inputs =
        a.job.equals("generate")
            ? List.of()
            : a.get("--input")
                .map(paths::input)
                .orElse(List.of(paths.qualified(Main.DEFAULT_DATA)));
    paths.checkOutputPlace(output, inputs);
    paths.checkExistingOutput(
        output,
        a.job,
        a.has(JobArgs.OVERWRITE) || defaultOutput,
        a.has(JobArgs.OVERWRITE_UNMARKED));
    if (a.job.equals("generate")) {
      checkRoom(paths, output, a.scale());
    }
    return output;
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

  /**
   * A standalone master that does not answer fails here, in seconds, rather than after Spark's
   * minute of registration retries.
   */
  static void checkMaster(String master) {
    if (!master.startsWith("spark://")) {
      return;
    }
    StringBuilder tried = new StringBuilder();
    for (String hostPort : master.substring("spark://".length()).split(",")) {
      int colon = hostPort.lastIndexOf(':');
      String host = colon < 0 ? hostPort : hostPort.substring(0, colon);
      int port;
      try {
        port = colon < 0 ? 7077 : Integer.parseInt(hostPort.substring(colon + 1));
      } catch (NumberFormatException e) {
        throw new UsageException(
            "--master '"
                + master
                + "' has no valid port in '"
                + hostPort
                + "'; e.g. spark://host:7077");
      }
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(host, port), 3000);
        return;
      } catch (IOException e) {
        tried
            .append(tried.length() == 0 ? "" : ", ")
            .append(host)
            .append(':')
            .append(port)
            .append(": ")
            .append(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
      }
    }
    throw new UsageException(
        "cannot reach the Spark master "
            + master
            + " (tried "
            + tried
            + "); is it running? Check --master, or start the master first");
  }
}
