package dev.overlap.executor.plan;

import dev.overlap.executor.plugin.OverlapDriverPlugin;
import dev.overlap.executor.task.JobReport;
import java.util.Arrays;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the session runs the Overlap plugin. Without it in {@code spark.plugins} no executor sets
 * up a GPU pipeline, so every task runs the kernel's CPU implementation (or fails without one): a
 * kernel applied there logs one warning saying so and what to set.
 */
public final class PluginCheck {
  private static final Logger LOG = LoggerFactory.getLogger(PluginCheck.class);

  /** The setting that loads the plugin. */
  public static final String SETTING = "spark.plugins=" + OverlapDriverPlugin.PLUGIN_CLASS;

  private PluginCheck() {}

  /**
   * Whether {@code spark.plugins} or {@code spark.plugins.defaultList} (which Spark loads too)
   * lists {@code OverlapPlugin}.
   */
  static boolean loaded(Function<String, String> conf) {
    return lists(conf.apply("spark.plugins")) || lists(conf.apply("spark.plugins.defaultList"));
  }

  private static boolean lists(String plugins) {
    return plugins != null
        && Arrays.stream(plugins.split(","))
            .map(String::trim)
            .anyMatch(OverlapDriverPlugin.PLUGIN_CLASS::equals);
  }

  /** The warning a kernel applied without the plugin logs. */
  static String warning(String kernel) {
    return "the Overlap plugin is not loaded (spark.plugins does not list "
        + OverlapDriverPlugin.PLUGIN_CLASS
        + "): "
        + kernel
        + " runs on the CPU path on every executor; set "
        + SETTING
        + " (beside other plugins, add it to the list) to use the GPU";
  }

  /**
   * Logs the warning when the session lacks the plugin, and records it in the report (may be null);
   * returns whether the plugin is loaded.
   */
  static boolean check(Function<String, String> conf, String kernel, JobReport report) {
    boolean loaded = loaded(conf);
    if (!loaded) {
      LOG.warn(warning(kernel));
      if (report != null) {
        report.markPluginNotLoaded(SETTING);
      }
    }
    return loaded;
  }
}
