package dev.overlap.executor.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.testing.AllTypesKernel;
import dev.overlap.executor.testing.LocalSession;
import dev.overlap.executor.testing.PrometheusText;
import dev.overlap.executor.testing.TestData;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The executor plugin's gauges and counters reach Spark's metrics system under the plugin's
 * namespace: read back through Spark's own Prometheus servlet sink on the UI of a local session,
 * with the GPU path off (the values the CPU path gives, whatever this machine has).
 */
class ExecutorMetricsTest {
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    List<String> conf = new ArrayList<>(Arrays.asList(PrometheusText.SINK_CONF));
    conf.addAll(
        List.of(
            "spark.plugins",
            "dev.overlap.executor.OverlapPlugin",
            "spark.overlap.enabled",
            "false"));
    spark = LocalSession.start("local[2]", "executor-metrics", conf.toArray(new String[0]));
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  private static Map<String, Long> metrics() throws Exception {
    return PrometheusText.plugin(PrometheusText.page(spark.sparkContext()));
  }

  @Test
  void everyGaugeAndCounterIsServedWithTheCpuPathsValues() throws Exception {
    Map<String, Long> m = metrics();
    for (String g : ExecutorMetrics.GAUGES) {
      String key = "gauges:" + PrometheusText.name(g);
      assertTrue(m.containsKey(key), key + " not served: " + m);
      // No GPU set up: nothing in use, in flight or fenced, and the GPU not active.
      assertEquals(0L, m.get(key), key);
    }
    for (String c : ExecutorMetrics.COUNTERS) {
      assertTrue(m.containsKey("counters:" + PrometheusText.name(c)), c + " not served: " + m);
    }
    assertEquals(ExecutorMetrics.GAUGES.size() + ExecutorMetrics.COUNTERS.size(), m.size(), "" + m);
  }

  @Test
  void theCpuTasksCountersGrowByTheReportsFigures() throws Exception {
    Map<String, Long> before = metrics();
    PipelineReport report = PipelineReport.create(spark);
    GpuPartitions.map(TestData.frame(spark, 2000, 3), new AllTypesKernel(), report).collectAsList();
    Map<String, Long> after = metrics();
    assertEquals(3, report.cpuTasks());
    assertEquals(
        report.cpuTasks(), after.get("counters:tasks_cpu") - before.get("counters:tasks_cpu"));
    long kernelMs =
        after.get("counters:busy_cpuKernel_ms") - before.get("counters:busy_cpuKernel_ms");
    // Both sides are whole milliseconds rounded down from nanosecond sums.
    assertTrue(
        Math.abs(kernelMs - report.cpuKernelNanos() / 1e6) <= 1.0,
        kernelMs + " ms against " + report.cpuKernelNanos() + " ns");
    assertEquals(0L, after.get("counters:tasks_gpu") - before.get("counters:tasks_gpu"));
    assertEquals(0L, after.get("counters:pipeline_batches"));
  }
}
