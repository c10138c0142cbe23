package dev.overlap.executor.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.gpu.FaultedFiles;
import dev.overlap.executor.input.parquet.FilePlan;
import dev.overlap.executor.input.parquet.NotForGpu;
import dev.overlap.executor.input.parquet.ParquetInput;
import dev.overlap.executor.plan.ColumnarPlans;
import dev.overlap.executor.task.ParquetPlanOrHost.Attempt;
import dev.overlap.executor.testing.LocalSession;
import java.nio.file.Files;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A Parquet partition goes to the host, with the reason, when cuDF cannot read a file's footer that
 * Spark reads; {@code spark.overlap.parquet.decode=GPU} fails it instead. cuDF's check is stood in
 * for here, over a file Spark wrote; {@code FooterCheckGpuTest} runs the real check on a footer
 * cuDF refuses.
 */
public class ParquetPlanOrHostTest {
  private static SparkSession spark;
  private static String dir;

  @BeforeAll
  static void start() throws Exception {
    spark = LocalSession.start("local[1]", "plan-or-host");
    dir = Files.createTempDirectory("overlap-plan-or-host").resolve("t").toString();
    spark
        .range(0, 1000)
        .selectExpr("id", "cast(id % 7 as int) as n")
        .coalesce(1)
        .write()
        .parquet(dir);
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  private static TaskInput.Parquet partition0() {
    return partition0(dir);
  }

  private static TaskInput.Parquet partition0(String dir) {
    Dataset<Row> df = spark.read().parquet(dir);
    var plan = ((org.apache.spark.sql.classic.Dataset<Row>) df).queryExecution().executedPlan();
    ColumnarPlans.Columnar c = ColumnarPlans.columnar(plan);
    ParquetInput in = ParquetInput.of(c.parquetScan(), c.names(), df.schema(), spark);
    return new TaskInput.Parquet(in, 0, new TaskInput.Columnar(Collections.emptyIterator()));
  }

  /** What cuDF says of such a footer. */
  private static void refused(FilePlan p) throws NotForGpu {
    throw new NotForGpu(
        ParquetPlanOrHost.footerRefused(
            p.split().fileName(),
            new RuntimeException(
                "CUDF failure at: compact_protocol_reader.cpp:123: expected int32 field, got list"
                    + " field instead\nstack")));
  }

  @Test
  void aFooterCudfRefusesSendsThePartitionToTheHostWithTheReason() {
    JobReport report = new JobReport(spark);
    assertNull(
        ParquetPlanOrHost.plans(partition0(), OverlapConf.defaults(), report, p -> refused(p)));
    List<String> why = report.parquetFallbacks();
    assertEquals(1, why.size(), why.toString());
    assertTrue(
        why.get(0)
            .contains(
                ".parquet: cuDF's Parquet reader cannot parse its footer, which Spark's reads (CUDF failure at: compact_protocol_reader.cpp:123: expected int32 field, got list field instead)"),
        why.get(0));
    // Accepted, the plans go to the GPU.
    assertNotNull(ParquetPlanOrHost.plans(partition0(), OverlapConf.defaults(), null, p -> {}));
  }

  @Test
  void aFileWhosePagesCudfCouldNotDecodeIsReadOnTheHostFromThenOn() throws Exception {
    String own = Files.createTempDirectory("overlap-undecodable").resolve("t").toString();
    spark.range(0, 100).coalesce(1).write().parquet(own);
    List<FilePlan> plans =
        ParquetPlanOrHost.plans(partition0(own), OverlapConf.defaults(), null, p -> {});
    String file = plans.get(0).split().path();
    JobReport report = new JobReport(spark);
    ParquetPlanOrHost.decodeFailed(
        new dev.overlap.executor.input.parquet.DecodeFailed(
            file, new RuntimeException("CUDF failure at: page_decode.cu: bad page")),
        report);
    assertEquals(
        List.of(
            file
                + ": cuDF's Parquet reader could not decode it (CUDF failure at: page_decode.cu: bad page)"),
        report.parquetFallbacks());
    JobReport later = new JobReport(spark);
    assertNull(ParquetPlanOrHost.plans(partition0(own), OverlapConf.defaults(), later, p -> {}));
    assertEquals(report.parquetFallbacks(), later.parquetFallbacks());
  }

  /**
   * The Parquet files other writers wrote, with nested and binary columns: Arrow's C++ writer and
   * Rust's parquet crate (tools/fixtures).
   */
  public static final List<String> WRITERS =
      List.of(
          "arrow-snappy-v1",
          "arrow-zstd-v2",
          "arrow-gzip-plain",
          "arrow-lz4-item",
          "arrow-none-large",
          "rust-snappy-v1",
          "rust-zstd-v2",
          "rust-lz4raw-v2");

  /** A folder holding only the fixture {@code name}. */
  public static String writerFile(String name) throws Exception {
    java.nio.file.Path dir = Files.createTempDirectory("overlap-writer-" + name);
    try (var in =
        ParquetPlanOrHostTest.class.getResourceAsStream("/writers/" + name + ".parquet")) {
      Files.copy(in, dir.resolve(name + ".parquet"));
    }
    return dir.toString();
  }

  @Test
  void nestedAndBinaryColumnsOtherWritersWroteArePlannedForTheGpu() throws Exception {
    for (String name : WRITERS) {
      String own = writerFile(name);
      JobReport report = new JobReport(spark);
      List<FilePlan> plans =
          ParquetPlanOrHost.plans(partition0(own), OverlapConf.defaults(), report, p -> {});
      assertNotNull(plans, name + ": " + report.parquetFallbacks());
      assertTrue(plans.get(0).columns().nested(), name);
      assertTrue(plans.get(0).columns().wholeFile(), name);
    }
  }

  @Test
  void gpuModeFailsTheTaskNamingTheFileAndTheSetting() {
    OverlapConf gpu = OverlapConf.fromMap(Map.of(OverlapConf.PARQUET_DECODE.key(), "GPU"));
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class,
            () -> ParquetPlanOrHost.plans(partition0(), gpu, null, p -> refused(p)));
    assertTrue(e.getMessage().contains("cannot parse its footer"), e.getMessage());
    assertTrue(e.getMessage().contains("spark.overlap.parquet.decode=GPU"), e.getMessage());
  }

  @Test
  void aStagesFirstTaskAsksTheDriverAndReadsAFileThatFaultedSinceOnTheHost() throws Exception {
    String own = Files.createTempDirectory("overlap-faulted-since").resolve("t").toString();
    spark.range(0, 100).coalesce(1).write().parquet(own);
    // Planned on the driver before the fault: the scan's snapshot of the record is empty.
    TaskInput.Parquet scan = partition0(own);
    String file =
        ParquetPlanOrHost.plans(scan, OverlapConf.defaults(), null, p -> {})
            .get(0)
            .split()
            .identity();
    String fault =
        "part-0.parquet: the GPU failed fatally while decoding it (cudaErrorIllegalAddress); it is"
            + " read on the host from now on";
    List<Object> asked = new java.util.ArrayList<>();
    FaultedFiles.link(
        m -> {
          asked.add(m);
          return m instanceof FaultedFiles.RecordAsked ? Map.of(file, fault) : null;
        });
    try {
      JobReport report = new JobReport(spark);
      // Outside a Spark task nothing is asked; the file goes to the GPU.
      assertNotNull(
          ParquetPlanOrHost.plans(
              scan, OverlapConf.defaults(), report, report, Attempt.FIRST, p -> {}));
      assertEquals(List.of(), asked);

      // A stage's first task on this executor asks, and reads the file on the host.
      assertNull(
          ParquetPlanOrHost.plans(
              scan, OverlapConf.defaults(), report, report, new Attempt(41, 0, 0), p -> {}));
      assertEquals(List.of(new FaultedFiles.RecordAsked()), asked);
      assertEquals(List.of(fault), report.gpuFaults());
      assertEquals(List.of(), report.parquetFallbacks(), "named once, as a fault");
      // Merged into the executor's record: its later tasks ask nothing and read it on the host.
      FaultedFiles.link(null);
      assertNull(
          ParquetPlanOrHost.plans(
              scan, OverlapConf.defaults(), null, null, new Attempt(41, 0, 0), p -> {}));
      assertNull(
          ParquetPlanOrHost.plans(
              scan, OverlapConf.defaults(), null, null, Attempt.FIRST, p -> {}));
    } finally {
      FaultedFiles.clear();
      FaultedFiles.link(null);
    }
  }

  @Test
  void aRetryAsksEvenInAStageThatAskedAndNamesTheFault() throws Exception {
    String own = Files.createTempDirectory("overlap-faulted-retry").resolve("t").toString();
    spark.range(0, 100).coalesce(1).write().parquet(own);
    TaskInput.Parquet scan = partition0(own);
    String file =
        ParquetPlanOrHost.plans(scan, OverlapConf.defaults(), null, p -> {})
            .get(0)
            .split()
            .identity();
    String fault =
        "part-0.parquet: the GPU failed fatally while decoding it (cudaErrorIllegalAddress)";
    Map<String, String> driver = new java.util.HashMap<>();
    List<Object> asked = new java.util.ArrayList<>();
    FaultedFiles.link(
        m -> {
          asked.add(m);
          return new java.util.HashMap<>(driver);
        });
    try {
      // The stage's first task asked before the fault: nothing to learn, the GPU decodes.
      assertNotNull(
          ParquetPlanOrHost.plans(
              scan, OverlapConf.defaults(), null, null, new Attempt(7, 0, 0), p -> {}));
      assertEquals(1, asked.size());
      driver.put(file, fault); // another executor faulted on the file and exited
      // A task's retry in the same stage asks again and names the fault, not only the retry.
      JobReport retried = new JobReport(spark);
      assertNull(
          ParquetPlanOrHost.plans(
              scan, OverlapConf.defaults(), retried, retried, new Attempt(7, 0, 1), p -> {}));
      assertEquals(2, asked.size());
      assertEquals(List.of(fault), retried.gpuFaults());
      assertEquals(List.of(), retried.parquetFallbacks());
      // A task of the stage's retry asks too.
      ParquetPlanOrHost.plans(
          scan, OverlapConf.defaults(), null, null, new Attempt(7, 1, 0), p -> {});
      assertEquals(3, asked.size());
    } finally {
      FaultedFiles.clear();
      FaultedFiles.link(null);
    }
  }
}
