package dev.overlap.executor.plugin;

import java.util.List;

/**
 * The Spark lines the plugin runs on. On another (Spark 3.x, or a line not yet known) the plugin
 * stays off ({@code OverlapPlugin}): one line at start names the version found and the ones
 * supported, and Spark runs every query as without the plugin.
 */
public final class SparkVersions {
  /** The supported lines, {@code major.minor}. */
  public static final List<String> LINES = List.of("4.0", "4.1", "4.2");

  private SparkVersions() {}

  /** The running Spark's version, as Spark gives it ({@code org.apache.spark.SPARK_VERSION}). */
  public static String running() {
    return org.apache.spark.package$.MODULE$.SPARK_VERSION();
  }

  /**
   * The line to log when {@code version} is not of a supported line, or null when it is.
   *
   * @param version a Spark version, e.g. {@code 4.1.3} or {@code 3.5.1-databricks}
   */
  public static String refusal(String version) {
    String[] parts = version.split("[.-]");
    String line = parts.length >= 2 ? parts[0] + "." + parts[1] : version;
    if (LINES.contains(line)) {
      return null;
    }
    return "Overlap supports Spark "
        + String.join(", ", LINES.subList(0, LINES.size() - 1))
        + " and "
        + LINES.get(LINES.size() - 1)
        + "; this is Spark "
        + version
        + ": the plugin stays off and Spark runs every query as without it";
  }
}
