package dev.overlap.executor.testing;

import org.apache.spark.sql.SparkSession;

/**
 * The executor's tests' one way to a Spark session without a GPU requirement: local, no UI, an app
 * name, and any other settings as key and value pairs (the GPU classes use {@link GpuSession}).
 */
public final class LocalSession {
  private LocalSession() {}

  public static SparkSession start(String master, String app, String... keyValues) {
    if (keyValues.length % 2 != 0) {
      throw new IllegalArgumentException("settings come in key and value pairs");
    }
    SparkSession.Builder b =
        SparkSession.builder().master(master).appName(app).config("spark.ui.enabled", "false");
    for (int i = 0; i < keyValues.length; i += 2) {
      b = b.config(keyValues[i], keyValues[i + 1]);
    }
    return b.getOrCreate();
  }
}
