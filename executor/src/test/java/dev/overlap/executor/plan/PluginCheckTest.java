package dev.overlap.executor.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.testing.AllTypesKernel;
import dev.overlap.executor.testing.LocalSession;
import dev.overlap.executor.testing.TestData;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A kernel applied in a session whose spark.plugins lacks the Overlap plugin: one warning naming
 * the setting, the CPU path, and a report that says so.
 */
class PluginCheckTest {
  private static SparkSession spark;
  @TempDir static Path tmp;

  @BeforeAll
  static void start() {
    // A session another class left running would be reused, plugin and all.
    if (SparkSession.getActiveSession().isDefined()) {
      SparkSession.getActiveSession().get().stop();
    }
    spark = LocalSession.start("local[2]", "no-plugin");
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  /** Our loggers' WARN events while {@code body} runs. */
  private static List<LogEvent> warnings(Runnable body) {
    ConcurrentLinkedQueue<LogEvent> events = new ConcurrentLinkedQueue<>();
    LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
    AbstractAppender capture =
        new AbstractAppender("capture-plugin", null, null, true, Property.EMPTY_ARRAY) {
          @Override
          public void append(LogEvent e) {
            if (e.getLoggerName().startsWith("dev.overlap") && e.getLevel() == Level.WARN) {
              events.add(e.toImmutable());
            }
          }
        };
    capture.start();
    ctx.getConfiguration().getRootLogger().addAppender(capture, Level.ALL, null);
    ctx.updateLoggers();
    try {
      body.run();
    } finally {
      ctx.getConfiguration().getRootLogger().removeAppender("capture-plugin");
      ctx.updateLoggers();
      capture.stop();
    }
    return List.copyOf(events);
  }

  @Test
  void thePluginsNameIsThePluginClasssOwn() {
    assertEquals(
        dev.overlap.executor.OverlapPlugin.class.getName(),
        dev.overlap.executor.plugin.OverlapDriverPlugin.PLUGIN_CLASS);
  }

  @Test
  void spark_pluginsIsReadAsAList() {
    String name = "dev.overlap.executor.OverlapPlugin";
    assertTrue(PluginCheck.loaded(Map.of("spark.plugins", name)::get));
    assertTrue(
        PluginCheck.loaded(Map.of("spark.plugins", "com.nvidia.spark.SQLPlugin, " + name)::get));
    assertFalse(PluginCheck.loaded(Map.<String, String>of()::get));
    assertFalse(PluginCheck.loaded(Map.of("spark.plugins", "com.nvidia.spark.SQLPlugin")::get));
    assertFalse(PluginCheck.loaded(Map.of("spark.plugins", name + "2")::get));
    // Spark loads spark.plugins.defaultList's plugins too.
    assertTrue(PluginCheck.loaded(Map.of("spark.plugins.defaultList", name)::get));
  }

  @Test
  void mapWithoutThePluginWarnsOnceAndRunsOnTheCpuPath() {
    PipelineReport report = PipelineReport.create(spark);
    List<LogEvent> warned =
        warnings(
            () ->
                assertEquals(
                    300,
                    GpuPartitions.map(TestData.frame(spark, 300, 3), new AllTypesKernel(), report)
                        .count()));
    assertEquals(1, warned.size(), warned.toString());
    String line = warned.get(0).getMessage().getFormattedMessage();
    assertTrue(line.contains("plugin is not loaded"), line);
    assertTrue(line.contains("set spark.plugins=dev.overlap.executor.OverlapPlugin"), line);
    assertTrue(line.contains(new AllTypesKernel().name()), line);
    assertFalse(line.contains("\n"), line);

    assertEquals(
        Optional.of("spark.plugins=dev.overlap.executor.OverlapPlugin"), report.pluginNotLoaded());
    assertEquals(0, report.gpuTasks());
    assertEquals(3, report.cpuTasks());
    assertEquals(300, report.rowsIn());
    String summary = report.stageSummary(1_000_000_000L, 2);
    assertTrue(
        summary.contains("CPU: 3 tasks ran the kernel's CPU implementation, none the GPU pipeline"),
        summary);
    assertTrue(
        summary.contains("plugin not loaded: set spark.plugins=dev.overlap.executor.OverlapPlugin"),
        summary);
    assertTrue(summary.contains("rows            300 in, 300 out"), summary);
    // CPU figures, not the GPU's stages at zero with host packing as their bottleneck.
    assertTrue(summary.contains("CPU kernel"), summary);
    assertFalse(summary.contains("bottleneck"), summary);
    assertFalse(summary.contains("host packing"), summary);
  }

  @Test
  void writeWithoutThePluginWarnsOnce() {
    PipelineReport report = PipelineReport.create(spark);
    String out = tmp.resolve("written").toString();
    List<LogEvent> warned =
        warnings(
            () ->
                GpuPartitions.write(
                    TestData.frame(spark, 50, 2),
                    new AllTypesKernel(),
                    ParquetOutput.to(out),
                    report));
    assertEquals(1, warned.size(), warned.toString());
    assertTrue(
        warned
            .get(0)
            .getMessage()
            .getFormattedMessage()
            .contains("set spark.plugins=dev.overlap.executor.OverlapPlugin"));
    assertTrue(report.pluginNotLoaded().isPresent());
    assertEquals(50, spark.read().parquet(out).count());
  }
}
