package dev.overlap.executor;

import dev.overlap.executor.api.Public;
import dev.overlap.executor.plugin.OverlapDriverPlugin;
import dev.overlap.executor.plugin.OverlapExecutorPlugin;
import dev.overlap.executor.plugin.SparkVersions;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.SparkPlugin;
import org.slf4j.LoggerFactory;

/**
 * The Spark plugin: {@code spark.plugins=dev.overlap.executor.OverlapPlugin}. Beside the RAPIDS
 * Accelerator, list {@code com.nvidia.spark.SQLPlugin} first so RAPIDS sets up RMM and this plugin
 * reuses it. On a Spark line it does not support ({@link SparkVersions}) it stays off, saying so in
 * one line.
 */
@Public
public final class OverlapPlugin implements SparkPlugin {
  // Decided before any other class of the plugin loads: on another Spark line they may not link.
  private static final String REFUSAL = SparkVersions.refusal(SparkVersions.running());

  @Override
  public DriverPlugin driverPlugin() {
    if (REFUSAL != null) {
      LoggerFactory.getLogger("dev.overlap").error(REFUSAL);
      return new DriverPlugin() {};
    }
    return new OverlapDriverPlugin();
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return REFUSAL != null ? new ExecutorPlugin() {} : new OverlapExecutorPlugin();
  }
}
