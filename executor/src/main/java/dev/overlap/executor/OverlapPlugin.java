package dev.overlap.executor;

import dev.overlap.executor.api.Public;
import dev.overlap.executor.plugin.OverlapDriverPlugin;
import dev.overlap.executor.plugin.OverlapExecutorPlugin;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * The Spark plugin: {@code spark.plugins=dev.overlap.executor.OverlapPlugin}. Beside the RAPIDS
 * Accelerator, list {@code com.nvidia.spark.SQLPlugin} first so RAPIDS sets up RMM and this plugin
 * reuses it.
 */
@Public
public final class OverlapPlugin implements SparkPlugin {
  @Override
  public DriverPlugin driverPlugin() {
    return new OverlapDriverPlugin();
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return new OverlapExecutorPlugin();
  }
}
