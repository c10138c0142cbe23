package dev.overlap.executor.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.InputPath;
import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.testing.AllTypesKernel;
import dev.overlap.executor.testing.LocalSession;
import dev.overlap.executor.testing.StageFigures;
import dev.overlap.executor.testing.TestData;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.VoidFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stage accumulators of {@code GpuPartitions.map} and {@code write} in a real local session on
 * the CPU path (the GPU path off, whatever the machine has): what Spark's status store, the UI's
 * and the History Server's source, shows on each stage equals the job's report.
 */
class StageAccumulatorsTest {
  private static SparkSession spark;
  @TempDir static Path tmp;
  private static String input;
  private static final int ROWS = 3000;

  @BeforeAll
  static void start() {
    spark =
        LocalSession.start(
            "local[2]",
            "stage-accumulators",
            "spark.plugins",
            "dev.overlap.executor.OverlapPlugin",
            "spark.overlap.enabled",
            "false");
    input = tmp.resolve("in").toString();
    TestData.frame(spark, ROWS, 4).write().parquet(input);
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  /** The one stage since {@code before} that shows Overlap's accumulators. */
  private static StageFigures onlyStageSince(List<StageFigures> before) throws Exception {
    List<StageFigures> stages = StageFigures.since(spark.sparkContext(), before);
    assertEquals(1, stages.size(), "stages with overlap.* accumulators: " + stages);
    return stages.get(0);
  }

  private static void assertCpuFigures(StageFigures stage, PipelineReport report) {
    assertTrue(report.cpuTasks() > 0 && report.gpuTasks() == 0, "not the CPU path");
    assertEquals(report.cpuTasks(), stage.get(StageAccumulators.TASKS_CPU), stage.toString());
    assertEquals(stage.tasks(), stage.get(StageAccumulators.TASKS_CPU), stage.toString());
    assertEquals(report.rowsIn(), stage.get(StageAccumulators.ROWS_IN), stage.toString());
    assertEquals(report.rowsOut(), stage.get(StageAccumulators.ROWS_OUT), stage.toString());
    assertEquals(
        report.cpuKernelNanos() / 1_000_000,
        stage.get(StageAccumulators.CPU_KERNEL_MS),
        stage.toString());
    // No task added to the GPU's figures: the stage page shows none of them.
    for (String gpuOnly :
        List.of(
            StageAccumulators.TASKS_GPU,
            StageAccumulators.BATCHES,
            StageAccumulators.COPY_IN_MS,
            StageAccumulators.COMPUTE_MS,
            StageAccumulators.COPY_BACK_MS)) {
      assertFalse(stage.values().containsKey(gpuOnly), gpuOnly + " shown: " + stage);
    }
  }

  @Test
  void aMapStageShowsTheReportsCpuFigures() throws Exception {
    List<StageFigures> before = StageFigures.completed(spark.sparkContext());
    PipelineReport report = PipelineReport.create(spark);
    Dataset<Row> out = GpuPartitions.map(spark.read().parquet(input), new AllTypesKernel(), report);
    assertEquals(ROWS, out.collectAsList().size());
    StageFigures stage = onlyStageSince(before);
    assertCpuFigures(stage, report);
    assertEquals(ROWS, stage.get(StageAccumulators.ROWS_IN));
  }

  @Test
  void aWriteStageShowsTheReportsCpuFigures() throws Exception {
    List<StageFigures> before = StageFigures.completed(spark.sparkContext());
    PipelineReport report = PipelineReport.create(spark);
    GpuPartitions.write(
        spark.read().parquet(input),
        new AllTypesKernel(),
        ParquetOutput.to(tmp.resolve("written").toString()),
        report);
    StageFigures stage = onlyStageSince(before);
    assertCpuFigures(stage, report);
    assertEquals(ROWS, stage.get(StageAccumulators.ROWS_OUT));
  }

  @Test
  void aMapWithoutAReportStillShowsItsFigures() throws Exception {
    List<StageFigures> before = StageFigures.completed(spark.sparkContext());
    GpuPartitions.map(spark.read().parquet(input), new AllTypesKernel()).collectAsList();
    StageFigures stage = onlyStageSince(before);
    assertEquals(ROWS, stage.get(StageAccumulators.ROWS_IN), stage.toString());
    assertEquals(stage.tasks(), stage.get(StageAccumulators.TASKS_CPU), stage.toString());
  }

  /**
   * The GPU path's figures, as its tasks record them (this machine need not have a GPU): each one
   * reaches its named accumulator through a real stage, times as the report's nanoseconds rounded
   * down once to the millisecond.
   */
  @Test
  void eachGpuFigureReachesItsNamedAccumulator() throws Exception {
    List<StageFigures> before = StageFigures.completed(spark.sparkContext());
    JobReport report = new JobReport(spark);
    StageAccumulators stage = StageAccumulators.register(spark.sparkContext());
    TaskFigures figures = TaskFigures.of(report, stage);
    JavaSparkContext.fromSparkContext(spark.sparkContext())
        .parallelize(List.of(1, 2, 3, 4, 5, 6), 3)
        .foreachPartition(
            (VoidFunction<java.util.Iterator<Integer>>)
                it -> {
                  while (it.hasNext()) {
                    int i = it.next();
                    Map<PipelineStage, Long> busy = new EnumMap<>(PipelineStage.class);
                    busy.put(PipelineStage.PACK, 1_100_001L * i);
                    busy.put(PipelineStage.UPLOAD, 2_200_003L * i);
                    busy.put(PipelineStage.COMPUTE, 3_300_005L * i);
                    busy.put(PipelineStage.DOWNLOAD, 4_400_007L * i);
                    figures.addGpuTask(
                        new JobReport.GpuTask(
                            InputPath.PARQUET,
                            100L * i,
                            10L * i,
                            i,
                            1000L * i,
                            busy,
                            500_009L * i,
                            600_011L * i,
                            0));
                    figures.addScan(new JobReport.ScanFigures(1, 2, 700L * i, 1_700_013L * i));
                  }
                });
    StageFigures shown = onlyStageSince(before);
    Map<String, Long> expected =
        Map.ofEntries(
            Map.entry(StageAccumulators.TASKS_GPU, report.gpuTasks()),
            Map.entry(StageAccumulators.ROWS_IN, report.rowsIn()),
            Map.entry(StageAccumulators.ROWS_OUT, report.rowsOut()),
            Map.entry(StageAccumulators.BATCHES, report.batches()),
            Map.entry(StageAccumulators.COPY_IN_BYTES, report.bytesCopied()),
            Map.entry(StageAccumulators.PARQUET_BYTES, report.parquetCompressedBytes()),
            Map.entry(StageAccumulators.PACK_MS, ms(report.busyNanos(PipelineStage.PACK))),
            Map.entry(StageAccumulators.COPY_IN_MS, ms(report.busyNanos(PipelineStage.UPLOAD))),
            Map.entry(StageAccumulators.COMPUTE_MS, ms(report.busyNanos(PipelineStage.COMPUTE))),
            Map.entry(StageAccumulators.DECODE_MS, ms(report.decodeNanos())),
            Map.entry(StageAccumulators.COPY_BACK_MS, ms(report.busyNanos(PipelineStage.DOWNLOAD))),
            Map.entry(StageAccumulators.STAGING_WAIT_MS, ms(report.stagingWaitNanos())),
            Map.entry(StageAccumulators.RESULT_WAIT_MS, ms(report.resultWaitNanos())));
    assertEquals(expected, shown.values());
    // Summed nanoseconds, rounded once: 21 x 3,300,005 ns is 69 ms, where rounding each of the
    // six tasks' own would give 66.
    assertEquals(69, shown.get(StageAccumulators.COMPUTE_MS));
    assertEquals(21 * 3_300_005L, report.busyNanos(PipelineStage.COMPUTE));
    // What the driver reads equals what the stage page shows.
    for (String name : expected.keySet()) {
      assertEquals(expected.get(name), stage.value(name), name);
    }
  }

  private static long ms(long nanos) {
    return nanos / 1_000_000;
  }

  /**
   * A task that began on the GPU and ended on the CPU after a fault: counted once, as a CPU task,
   * and as one that fell back; the faulted file named once however many tasks name it, on the stage
   * page and in the report.
   */
  @Test
  void aTaskThatFellBackCountsOnceAndItsFaultShowsOnce() throws Exception {
    List<StageFigures> before = StageFigures.completed(spark.sparkContext());
    JobReport report = new JobReport(spark);
    StageAccumulators stage = StageAccumulators.register(spark.sparkContext());
    TaskFigures figures = TaskFigures.of(report, stage);
    String fault =
        "part-00003.parquet: the GPU failed fatally while decoding it (cudaErrorIllegalAddress);"
            + " it is read on the host from now on";
    JavaSparkContext.fromSparkContext(spark.sparkContext())
        .parallelize(List.of(1, 2, 3), 3)
        .foreachPartition(
            (VoidFunction<java.util.Iterator<Integer>>)
                it -> {
                  while (it.hasNext()) {
                    int i = it.next();
                    // The GPU handed on results for 10 input rows; the CPU read the other 90.
                    figures.addFellBack(
                        new JobReport.GpuTask(
                            InputPath.PARQUET, 10, 10, 1, 1000, Map.of(), 0, 0, 0));
                    figures.addCpuTask(90, 90, 1_000_000L * i);
                    figures.addFault(fault);
                  }
                });
    StageFigures shown = onlyStageSince(before);
    assertEquals(3, shown.get(StageAccumulators.TASKS_FELL_BACK), shown.toString());
    assertEquals(3, shown.get(StageAccumulators.TASKS_CPU), shown.toString());
    assertFalse(shown.values().containsKey(StageAccumulators.TASKS_GPU), shown.toString());
    assertEquals(300, shown.get(StageAccumulators.ROWS_IN), shown.toString());
    assertEquals("[" + fault + "]", shown.texts().get(StageAccumulators.FAULTED_FILES));
    assertEquals(List.of(fault), stage.faults());

    assertEquals(0, report.gpuTasks());
    assertEquals(3, report.cpuTasks());
    assertEquals(3, report.fellBackTasks());
    assertEquals(300, report.rowsIn());
    assertEquals(List.of(fault), report.gpuFaults());
    assertEquals(List.of(), report.parquetFallbacks());
    String summary = report.stageSummary(1_000_000_000L, 2);
    assertEquals(1, summary.split("GPU fault       ", -1).length - 1, summary);
    assertTrue(summary.contains("GPU fault       " + fault + "\n"), summary);
    assertTrue(
        summary.contains(
            "fell back       3 of the CPU tasks began on the GPU and went on on the CPU after a"
                + " fatal GPU error"),
        summary);
  }
}
