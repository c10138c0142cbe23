package dev.overlap.executor.spark;

import dev.overlap.executor.config.OverlapConf;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.resource.ResourceInformation;

/**
 * Driver side: validates the configuration before any executor starts, and in local mode passes the
 * driver's GPU address to the executor (Spark gives a local executor no resources of its own).
 */
public final class OverlapDriverPlugin implements DriverPlugin {
  /** The extraConf key carrying the driver's GPU address to a local-mode executor. */
  static final String DRIVER_GPU_ADDRESS = "driverGpuAddress";

  @Override
  public Map<String, String> init(SparkContext sc, PluginContext ctx) {
    OverlapConf.read(k -> sc.getConf().get(k, null)); // a bad value fails the application here
    Map<String, String> extra = new HashMap<>();
    if (sc.isLocal()) {
      ResourceInformation gpu = sc.resources().get("gpu").getOrElse(() -> null);
      if (gpu != null && gpu.addresses().length > 0) {
        extra.put(DRIVER_GPU_ADDRESS, gpu.addresses()[0]);
      }
    }
    return extra;
  }
}
