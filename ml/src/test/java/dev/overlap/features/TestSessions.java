package dev.overlap.features;

import org.apache.spark.sql.SparkSession;

/**
 * The encoder's tests' one way to a Spark session: local, no UI, the session's zone UTC (as the
 * features job runs), with the Overlap plugin or without, and any other settings as key and value
 * pairs.
 */
final class TestSessions {
  private TestSessions() {}

  /** A session on {@code master} without the plugin, with {@code keyValues} set. */
  static SparkSession local(String master, String... keyValues) {
    return builder(master, keyValues).getOrCreate();
  }

  /** A session on {@code master} with the Overlap plugin, with {@code keyValues} set. */
  static SparkSession withPlugin(String master, String... keyValues) {
    return builder(master, keyValues)
        .config("spark.plugins", "dev.overlap.executor.OverlapPlugin")
        .getOrCreate();
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
