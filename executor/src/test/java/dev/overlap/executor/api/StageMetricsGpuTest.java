package dev.overlap.executor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.plugin.ExecutorMetrics;
import dev.overlap.executor.task.StageAccumulators;
import dev.overlap.executor.testing.AllTypesKernel;
import dev.overlap.executor.testing.GpuSession;
import dev.overlap.executor.testing.PrometheusText;
import dev.overlap.executor.testing.StageFigures;
import dev.overlap.executor.testing.TestData;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * On a real GPU: a map's and a write's stage accumulators equal the job's report (times to the
 * millisecond), and the executor's gauges and counters reach Spark's Prometheus servlet sink with
 * the GPU's values.
 */
@Tag("gpu")
class StageMetricsGpuTest {
  private static SparkSession spark;
  private static String input;

  @BeforeAll
  static void start() throws Exception {
    Map<String, String> conf = new HashMap<>();
    for (int i = 0; i < PrometheusText.SINK_CONF.length; i += 2) {
      conf.put(PrometheusText.SINK_CONF[i], PrometheusText.SINK_CONF[i + 1]);
    }
    spark = GpuSession.start("gpu-stage-metrics", "local[4]", conf);
    Path root = Files.createTempDirectory("overlap-stage-metrics");
    input = root.resolve("in").toString();
    TestData.frame(spark, 60_000, 4).write().parquet(input);
  }

  @AfterEach
  void nothingHeld() {
    GpuSession.assertNothingHeld(spark);
  }

  @AfterAll
  static void stop() {
    GpuSession.stop(spark);
  }

  private static long ms(long nanos) {
    return nanos / 1_000_000;
  }

  /** Every figure the stage shows is the report's; times rounded down to the millisecond. */
  private static void assertStageIsReport(StageFigures s, PipelineReport r) {
    assertTrue(r.gpuTasks() > 0 && r.cpuTasks() == 0, "not the GPU path: " + s);
    Map<String, Long> expected = new HashMap<>();
    expected.put(StageAccumulators.TASKS_GPU, r.gpuTasks());
    expected.put(StageAccumulators.ROWS_IN, r.rowsIn());
    expected.put(StageAccumulators.ROWS_OUT, r.rowsOut());
    expected.put(StageAccumulators.BATCHES, r.batches());
    expected.put(StageAccumulators.COPY_IN_BYTES, r.bytesCopied());
    expected.put(StageAccumulators.PARQUET_BYTES, r.parquetCompressedBytes());
    expected.put(StageAccumulators.PACK_MS, ms(r.busyNanos(PipelineStage.PACK)));
    expected.put(StageAccumulators.COPY_IN_MS, ms(r.busyNanos(PipelineStage.UPLOAD)));
    expected.put(StageAccumulators.COMPUTE_MS, ms(r.busyNanos(PipelineStage.COMPUTE)));
    expected.put(StageAccumulators.DECODE_MS, ms(r.decodeNanos()));
    expected.put(StageAccumulators.COPY_BACK_MS, ms(r.busyNanos(PipelineStage.DOWNLOAD)));
    expected.put(StageAccumulators.STAGING_WAIT_MS, ms(r.stagingWaitNanos()));
    expected.put(StageAccumulators.RESULT_WAIT_MS, ms(r.resultWaitNanos()));
    expected.put(StageAccumulators.RAPIDS_MS, ms(r.rapidsBatchNanos()));
    for (Map.Entry<String, Long> e : expected.entrySet()) {
      assertEquals(e.getValue(), s.get(e.getKey()), e.getKey() + " on " + s);
    }
    assertEquals(s.tasks(), s.get(StageAccumulators.TASKS_GPU), s.toString());
    assertTrue(s.get(StageAccumulators.BATCHES) > 0, s.toString());
    assertTrue(s.get(StageAccumulators.COPY_IN_BYTES) > 0, s.toString());
  }

  private static StageFigures onlyStageSince(List<StageFigures> before) throws Exception {
    List<StageFigures> stages = StageFigures.since(spark.sparkContext(), before);
    assertEquals(1, stages.size(), "stages with overlap.* accumulators: " + stages);
    return stages.get(0);
  }

  @Test
  void aParquetMapStageShowsTheReportsGpuFigures() throws Exception {
    List<StageFigures> before = StageFigures.completed(spark.sparkContext());
    PipelineReport report = PipelineReport.create(spark);
    GpuPartitions.map(spark.read().parquet(input), new AllTypesKernel(), report).collectAsList();
    StageFigures s = onlyStageSince(before);
    assertStageIsReport(s, report);
    assertTrue(report.gpuTasks(InputPath.PARQUET) > 0, "not decoded on the GPU: " + s);
    assertTrue(s.get(StageAccumulators.DECODE_MS) <= s.get(StageAccumulators.COMPUTE_MS), "" + s);
  }

  @Test
  void aRowsMapAndAWriteShowTheReportsGpuFigures() throws Exception {
    List<StageFigures> before = StageFigures.completed(spark.sparkContext());
    PipelineReport rows = PipelineReport.create(spark);
    GpuPartitions.map(TestData.frame(spark, 20_000, 4), new AllTypesKernel(), rows).collectAsList();
    StageFigures mapped = onlyStageSince(before);
    assertStageIsReport(mapped, rows);
    assertTrue(rows.gpuTasks(InputPath.ROWS) > 0, "rows not packed on the host: " + mapped);

    List<StageFigures> beforeWrite = StageFigures.completed(spark.sparkContext());
    PipelineReport written = PipelineReport.create(spark);
    Path out = Files.createTempDirectory("overlap-stage-write").resolve("out");
    GpuPartitions.write(
        spark.read().parquet(input),
        new AllTypesKernel(),
        ParquetOutput.to(out.toString()),
        written);
    assertStageIsReport(onlyStageSince(beforeWrite), written);
  }

  @Test
  void theSinkServesTheGpusGaugesAndCounters() throws Exception {
    Map<String, Long> before = PrometheusText.plugin(PrometheusText.page(spark.sparkContext()));
    PipelineReport report = PipelineReport.create(spark);
    GpuPartitions.map(spark.read().parquet(input), new AllTypesKernel(), report).collectAsList();
    GpuSession.assertNothingHeld(spark);
    Map<String, Long> m = PrometheusText.plugin(PrometheusText.page(spark.sparkContext()));
    assertEquals(
        ExecutorMetrics.GAUGES.size() + ExecutorMetrics.COUNTERS.size(), m.size(), m.toString());
    assertEquals(1L, m.get("gauges:gpu_active"), m.toString());
    assertEquals(0L, m.get("gauges:gpu_fenced"), m.toString());
    assertEquals(3L, m.get("gauges:staging_buffers"), m.toString()); // GpuSession's 3
    assertEquals(3L, m.get("gauges:staging_buffersFree"), "every task has ended: " + m);
    assertEquals(0L, m.get("gauges:pipeline_batchesInFlight"), m.toString());
    assertEquals(0L, m.get("gauges:deviceBudget_inUseBytes"), m.toString());
    assertTrue(m.get("gauges:deviceBudget_limitBytes") > 0, m.toString());
    assertTrue(m.get("gauges:deviceBudget_peakBytes") > 0, m.toString());
    assertEquals(report.gpuTasks(), m.get("counters:tasks_gpu") - before.get("counters:tasks_gpu"));
    assertEquals(
        report.batches(),
        m.get("counters:pipeline_batches") - before.get("counters:pipeline_batches"));
    assertEquals(
        report.bytesCopied(),
        m.get("counters:pipeline_copyIn_bytes") - before.get("counters:pipeline_copyIn_bytes"));
  }
}
