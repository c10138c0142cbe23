package dev.overlap.executor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.PinnedMemoryPool;
import ai.rapids.cudf.Rmm;
import dev.overlap.executor.plugin.ExecutorState;
import dev.overlap.executor.testing.AllTypesKernel;
import dev.overlap.executor.testing.GpuSession;
import dev.overlap.executor.testing.TestData;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Beside the RAPIDS Accelerator on a real GPU: both plugins in one local Spark session, the RAPIDS
 * jar on the class path in place of cuDF's (it carries the same classes). Every type RAPIDS exports
 * reaches the kernel as RAPIDS' device batches (no packing, no upload) and equals Spark SQL on the
 * CPU; a type it does not export, or RAPIDS switched off for a query, takes Overlap's own path and
 * says why. Nothing leaks in RMM (RAPIDS set it up; Overlap uses it) or in the pinned pool.
 *
 * <p>Run by {@code tools/gpu-suite.sh rapids} on a GPU machine that received the RAPIDS jar ({@code
 * pack.sh --rapids}); tagged apart from the other GPU tests, which run without it.
 */
@Tag("rapids")
class RapidsInputGpuTest {
  private static final String[] NOT_EXPORTED = {"dec38", "ntz"};
  private static SparkSession spark;
  private static String exported;
  private static String everyType;
  private static long rmmBefore;
  private static long pinnedBefore;

  @BeforeAll
  static void start() throws Exception {
    assumeTrue(Cuda.isEnvCompatibleForTesting(), "no GPU");
    boolean rapids;
    try {
      Class.forName("com.nvidia.spark.rapids.ColumnarRdd");
      rapids = true;
    } catch (ClassNotFoundException e) {
      rapids = false;
    }
    assumeTrue(rapids, "the RAPIDS Accelerator's jar is not on the class path");
    spark =
        GpuSession.start(
            "rapids-input",
            "local[4]",
            Map.of(
                "spark.plugins",
                "com.nvidia.spark.SQLPlugin,dev.overlap.executor.OverlapPlugin",
                "spark.sql.session.timeZone",
                "UTC",
                "spark.overlap.rapids.input",
                "AUTO",
                "spark.rapids.sql.concurrentGpuTasks",
                "2",
                "spark.rapids.memory.pinnedPool.size",
                "512m",
                "spark.rapids.sql.explain",
                "NOT_ON_GPU"));
    assertTrue(GpuStatus.current().gpu(), GpuStatus.current().reason());
    java.nio.file.Path tmp = Files.createTempDirectory("overlap-rapids");
    exported = tmp.resolve("exported").toString();
    everyType = tmp.resolve("every-type").toString();
    onCpu(
        () -> {
          TestData.frame(spark, 30_000, 5).drop(NOT_EXPORTED).write().parquet(exported);
          TestData.frame(spark, 12_000, 3).write().parquet(everyType);
          return null;
        });
    // RAPIDS on its own first: what it keeps between queries is the baseline.
    assertEquals(1, spark.read().parquet(exported).selectExpr("sum(i64)").collectAsList().size());
    rmmBefore = Rmm.getTotalBytesAllocated();
    pinnedBefore = largestPinned();
  }

  /**
   * The largest pinned buffer the pool gives now: RAPIDS keeps buffers of its own in the pool it
   * made (bounce buffers), so what is free after its first query is the baseline.
   */
  private static long largestPinned() {
    long lo = 0;
    long hi = PinnedMemoryPool.getTotalPoolSizeBytes();
    while (hi - lo > 4096) {
      long mid = (lo + hi) >>> 1;
      try (var b = PinnedMemoryPool.tryAllocate(mid)) {
        if (b != null) {
          lo = mid;
        } else {
          hi = mid;
        }
      }
    }
    return lo;
  }

  @AfterAll
  static void stop() {
    if (spark == null) {
      return;
    }
    try {
      // Every task has ended: the device batches RAPIDS handed over are closed, and every pinned
      // buffer is back.
      assertEquals(rmmBefore, Rmm.getTotalBytesAllocated(), "device memory leaked");
      assertTrue(pinnedBefore > 0);
      assertEquals(pinnedBefore, largestPinned(), "pinned host memory leaked");
    } finally {
      spark.stop();
    }
  }

  /** Runs {@code f} with RAPIDS switched off for its queries: Spark's own CPU operators. */
  private static <T> T onCpu(Supplier<T> f) {
    spark.conf().set("spark.rapids.sql.enabled", "false");
    try {
      return f.get();
    } finally {
      spark.conf().set("spark.rapids.sql.enabled", "true");
    }
  }

  private static List<String> cpuResult(String dir, String[] sql) {
    return onCpu(() -> TestData.sorted(spark.read().parquet(dir).selectExpr(sql).collectAsList()));
  }

  @Test
  void theOverlapPluginRunsOnRapidsMemory() {
    assertTrue(ExecutorState.runtime().isPresent());
    assertTrue(Rmm.isInitialized());
  }

  /** Runs {@code f} with {@code spark.overlap.rapids.input} set to {@code mode}. */
  private static <T> T withMode(String mode, Supplier<T> f) {
    spark.conf().set("spark.overlap.rapids.input", mode);
    try {
      return f.get();
    } finally {
      spark.conf().set("spark.overlap.rapids.input", "AUTO");
    }
  }

  /** The kernel over the files of exported types, its rows sorted. */
  private static List<String> mapExported(PipelineReport report) {
    return TestData.sorted(
        GpuPartitions.map(spark.read().parquet(exported), AllTypesKernel.withoutNtz(), report)
            .collectAsList());
  }

  private static void assertRapidsBatches(PipelineReport report, long rows) {
    assertEquals(Optional.empty(), report.rapidsNotTaken());
    assertTrue(report.gpuTasks() > 0);
    assertEquals(report.gpuTasks(), report.gpuTasks(InputPath.RAPIDS));
    assertEquals(rows, report.rowsIn());
    // Nothing packed on the host, nothing copied up: the batches were on the device already (the
    // upload stage only hands each one on). The task threads' time went to RAPIDS' operators.
    assertEquals(0, report.busyNanos(PipelineStage.PACK));
    assertEquals(0, report.bytesCopied());
    assertTrue(report.rapidsBatchNanos() > 0);
  }

  @Test
  void parquetOfEveryExportedTypeComesAsRapidsDeviceBatchesWithAlways() {
    PipelineReport report = PipelineReport.create(spark);
    List<String> got = withMode("ALWAYS", () -> mapExported(report));
    assertEquals(cpuResult(exported, AllTypesKernel.SQL_WITHOUT_NTZ), got);
    assertRapidsBatches(report, 30_000);
  }

  @Test
  void nestedAndBinaryColumnsComeAsRapidsDeviceBatchesWithAlways() throws Exception {
    String dir = Files.createTempDirectory("overlap-rapids-nested").resolve("t").toString();
    onCpu(
        () -> {
          dev.overlap.executor.testing.NestedData.frame(spark, 6_000, 3).write().parquet(dir);
          return null;
        });
    PipelineReport report = PipelineReport.create(spark);
    // The kernel's job runs with RAPIDS on (it hands over its device batches); the rows are kept
    // and compared with Spark's own reader's on the CPU.
    Dataset<Row> out =
        withMode(
            "ALWAYS",
            () ->
                GpuPartitions.map(
                        spark.read().parquet(dir),
                        new dev.overlap.executor.testing.PassThroughKernel(),
                        report)
                    .localCheckpoint(true));
    List<String> got = onCpu(() -> dev.overlap.executor.plan.NestedColumnsTest.byId(out));
    List<String> want =
        onCpu(() -> dev.overlap.executor.plan.NestedColumnsTest.byId(spark.read().parquet(dir)));
    assertEquals(want, got);
    assertRapidsBatches(report, 6_000);
  }

  @Test
  void aPlainParquetScanIsDecodedByOverlapWithAuto() {
    PipelineReport report = PipelineReport.create(spark);
    assertEquals(cpuResult(exported, AllTypesKernel.SQL_WITHOUT_NTZ), mapExported(report));
    String why = report.rapidsNotTaken().orElseThrow();
    assertTrue(why.startsWith("a plain Parquet scan, which Overlap decodes on the GPU"), why);
    assertEquals(report.gpuTasks(), report.gpuTasks(InputPath.PARQUET));
    assertTrue(report.parquetFiles() > 0);
  }

  @Test
  void aPlanRapidsComputesComesAsItsDeviceBatchesWithAuto() {
    // A filter on the GPU: more than a scan, so RAPIDS' batches are taken.
    Dataset<Row> df = spark.read().parquet(exported).filter("id % 3 <> 1");
    PipelineReport report = PipelineReport.create(spark);
    List<String> got =
        TestData.sorted(GpuPartitions.map(df, AllTypesKernel.withoutNtz(), report).collectAsList());
    List<String> expected =
        onCpu(
            () ->
                TestData.sorted(
                    spark
                        .read()
                        .parquet(exported)
                        .filter("id % 3 <> 1")
                        .selectExpr(AllTypesKernel.SQL_WITHOUT_NTZ)
                        .collectAsList()));
    assertEquals(expected, got);
    assertRapidsBatches(report, expected.size());
  }

  @Test
  void rowsUnderAdaptiveExecutionArePackedAndSayWhy() {
    // A shuffle makes the plan adaptive: ColumnarRdd would convert its rows on the host, and fails
    // on the dates among them.
    Dataset<Row> df = TestData.frame(spark, 20_000, 6).drop(NOT_EXPORTED);
    PipelineReport report = PipelineReport.create(spark);
    List<String> got =
        TestData.sorted(GpuPartitions.map(df, AllTypesKernel.withoutNtz(), report).collectAsList());
    List<String> expected =
        onCpu(() -> TestData.sorted(df.selectExpr(AllTypesKernel.SQL_WITHOUT_NTZ).collectAsList()));
    assertEquals(expected, got);
    String why = report.rapidsNotTaken().orElseThrow();
    assertTrue(why.startsWith("the plan runs under adaptive execution"), why);
    assertEquals(0, report.gpuTasks(InputPath.RAPIDS));
    assertEquals(20_000, report.rowsIn());
  }

  @Test
  void aTypeRapidsDoesNotExportTakesOverlapsOwnPathAndSaysWhy() {
    PipelineReport report = PipelineReport.create(spark);
    Dataset<Row> out =
        GpuPartitions.map(spark.read().parquet(everyType), new AllTypesKernel(), report);
    assertEquals(cpuResult(everyType, AllTypesKernel.SQL), TestData.sorted(out.collectAsList()));
    String why = report.rapidsNotTaken().orElseThrow();
    assertTrue(why.startsWith("column 'dec38' is decimal(38,10)"), why);
    // Still no rows packed: RAPIDS is off while the input is planned again, and Overlap decodes.
    assertEquals(report.gpuTasks(), report.gpuTasks(InputPath.PARQUET));
    assertTrue(report.gpuTasks() > 0);
  }

  @Test
  void rapidsSwitchedOffForAQueryIsNamed() {
    PipelineReport report = PipelineReport.create(spark);
    List<String> got = onCpu(() -> mapExported(report));
    assertEquals(cpuResult(exported, AllTypesKernel.SQL_WITHOUT_NTZ), got);
    assertEquals(Optional.of("spark.rapids.sql.enabled=false"), report.rapidsNotTaken());
    assertEquals(0, report.gpuTasks(InputPath.RAPIDS));
    assertTrue(report.gpuTasks(InputPath.PARQUET) > 0);
  }
}
