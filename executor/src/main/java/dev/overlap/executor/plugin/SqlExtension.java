package dev.overlap.executor.plugin;

import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.config.SqlKeys;
import java.util.Arrays;
import org.apache.spark.SparkConf;

/**
 * Adds the SQL compiler's session extension to {@code spark.sql.extensions} on the driver, before
 * Spark SQL reads it to build the session: {@code spark.plugins} alone is then enough, as with the
 * RAPIDS Accelerator. {@code spark.overlap.sql.enabled=false} at start leaves the key alone.
 */
final class SqlExtension {
  /** The extension's class, in the SQL package. */
  static final String CLASS = "dev.overlap.executor.sql.OverlapSqlExtensions";

  static final String KEY = "spark.sql.extensions";

  private SqlExtension() {}

  /** Adds the extension to {@code conf} (the SparkContext's own) unless off or already there. */
  static void install(SparkConf conf, OverlapConf settings) {
    if (!settings.get(SqlKeys.ENABLED)) {
      return;
    }
    String current = conf.get(KEY, "").trim();
    if (Arrays.stream(current.split(",")).map(String::trim).anyMatch(CLASS::equals)) {
      return;
    }
    conf.set(KEY, current.isEmpty() ? CLASS : current + "," + CLASS);
  }
}
