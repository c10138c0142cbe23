package dev.overlap.jobs;

import org.apache.spark.sql.SparkSession;

/**
 * The jobs' tests' one way to a Spark session: local, no UI, the session's zone UTC (as the jobs
 * run), with the Overlap plugin or without, and any other settings as key and value pairs; or, in a
 * main that spark-submit starts, the session it sets up.
 */
public final class TestSessions {
  private TestSessions() {}

  /** A session on {@code master} without the plugin, with {@code keyValues} set. */
  public static SparkSession local(String master, String... keyValues) {
    return builder(master, keyValues).getOrCreate();
  }

  /** A session on {@code master} with the Overlap plugin, with {@code keyValues} set. */
  public static SparkSession withPlugin(String master, String... keyValues) {
    return builder(master, keyValues)
        .config("spark.plugins", "dev.overlap.executor.OverlapPlugin")
        .getOrCreate();
  }

  /**
   * The session of a main that spark-submit starts in a process of its own ({@link RunModeIT}'s
   * application): its master and settings are those spark-submit passes, so none is set here.
   */
  public static SparkSession submitted() {
    return SparkSession.builder().getOrCreate();
  }

  private static SparkSession.Builder builder(String master, String... keyValues) {
    if (keyValues.length % 2 != 0) {
      throw new IllegalArgumentException("settings come in key and value pairs");
    }
    SparkSession.Builder b =
        SparkSession.builder()
            .master(master)
            .config("spark.ui.enabled", "false")
            .config("spark.sql.session.timeZone", "UTC");
    for (int i = 0; i < keyValues.length; i += 2) {
      b = b.config(keyValues[i], keyValues[i + 1]);
    }
    return b;
  }
}
