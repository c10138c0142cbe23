package dev.overlap.executor.plugin;

import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.config.UnknownKeys;
import dev.overlap.executor.gpu.FaultedFiles;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.resource.ResourceInformation;

/**
 * Driver side: validates the configuration before any executor starts, in local mode passes the
 * driver's GPU address to the executor (Spark gives a local executor no resources of its own), and
 * starts the planner's warm-up ({@link PlannerWarmUp}).
 *
 * <p>An unknown {@code spark.overlap.*} key or an invalid value throws an {@link
 * dev.overlap.executor.config.OverlapConfigException} from {@link #init}, which fails the
 * SparkContext's creation with it. It is thrown, not logged here: Spark reports it, and a job
 * prints its message.
 */
public final class OverlapDriverPlugin implements DriverPlugin {
  /** The plugin's class, as {@code spark.plugins} names it ({@code OverlapPlugin}). */
  public static final String PLUGIN_CLASS = "dev.overlap.executor.OverlapPlugin";

  /** The extraConf key carrying the driver's GPU address to a local-mode executor. */
  static final String DRIVER_GPU_ADDRESS = "driverGpuAddress";

  private PlannerWarmUp warmUp;

  @Override
  public Map<String, String> init(SparkContext sc, PluginContext ctx) {
    // An unknown key or a bad value fails the application here.
    SparkConf conf = sc.getConf();
    List<String> keys = new ArrayList<>();
    for (scala.Tuple2<String, String> kv : conf.getAll()) {
      keys.add(kv._1());
    }
    UnknownKeys.check(keys);
    OverlapConf settings = OverlapConf.read(k -> conf.get(k, null));
    // The context's own conf, not a copy: Spark SQL reads the extensions from it afterwards.
    SqlExtension.install(ctx.conf(), settings);
    if (settings.get(OverlapConf.PLANNER_WARM_UP)) {
      warmUp = PlannerWarmUp.start(sc);
    }
    Map<String, String> extra = new HashMap<>();
    if (sc.isLocal()) {
      ResourceInformation gpu = sc.resources().get("gpu").getOrElse(() -> null);
      if (gpu != null && gpu.addresses().length > 0) {
        extra.put(DRIVER_GPU_ADDRESS, gpu.addresses()[0]);
      }
    }
    return extra;
  }

  /**
   * An executor's message ({@link FaultedFiles#answer}): a file whose decode failed fatally on its
   * GPU, or a retried task's question for the files recorded so far.
   */
  @Override
  public Object receive(Object message) {
    return FaultedFiles.answer(message);
  }

  @Override
  public void shutdown() {
    if (warmUp != null) {
      warmUp.stop(2_000);
    }
  }
}
