package dev.overlap.executor.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.config.ParquetDecodeMode;
import dev.overlap.executor.config.RapidsInputMode;
import dev.overlap.executor.testing.AllTypesKernel;
import dev.overlap.executor.testing.LocalSession;
import dev.overlap.executor.testing.TestData;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * When a kernel's input is taken from the RAPIDS Accelerator's device batches, and why not, without
 * the RAPIDS jar: RAPIDS absent from spark.plugins, present there but its jar missing, disabled,
 * explain-only, a plan it did not place on the GPU, the setting off; the one line on cuDF versions.
 */
class RapidsInputTest {
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = LocalSession.start("local[2]", "rapids-input", "spark.sql.adaptive.enabled", "false");
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  private static SparkPlan cpuPlan() {
    return TestData.frame(spark, 10, 1).selectExpr("id + 1 as x").queryExecution().executedPlan();
  }

  private static Optional<String> why(Map<String, String> conf, RapidsInputMode mode) {
    return RapidsInput.whyNot(conf::get, mode, true, cpuPlan(), true);
  }

  private static Map<String, String> withRapids() {
    Map<String, String> c = new HashMap<>();
    c.put("spark.plugins", "com.nvidia.spark.SQLPlugin, dev.overlap.executor.OverlapPlugin");
    return c;
  }

  @Test
  void withoutRapidsInSparkPluginsThereIsNothingToSay() {
    assertNull(why(Map.of(), RapidsInputMode.AUTO));
    assertNull(
        why(Map.of("spark.plugins", "dev.overlap.executor.OverlapPlugin"), RapidsInputMode.AUTO));
    // The class name must match exactly, not as a prefix.
    assertNull(why(Map.of("spark.plugins", "com.nvidia.spark.SQLPluginX"), RapidsInputMode.AUTO));
  }

  @Test
  void eachReasonIsNamed() {
    assertEquals(
        Optional.of("spark.overlap.rapids.input=OFF"), why(withRapids(), RapidsInputMode.OFF));
    Optional<String> missing =
        RapidsInput.whyNot(withRapids()::get, RapidsInputMode.AUTO, true, cpuPlan(), false);
    assertTrue(missing.orElseThrow().contains("com.nvidia.spark.rapids.ColumnarRdd is not on the"));
    Map<String, String> disabled = withRapids();
    disabled.put("spark.rapids.sql.enabled", "false");
    assertEquals(
        Optional.of("spark.rapids.sql.enabled=false"), why(disabled, RapidsInputMode.AUTO));
    Map<String, String> explain = withRapids();
    explain.put("spark.rapids.sql.mode", "explainOnly");
    assertEquals(
        Optional.of("spark.rapids.sql.mode=explainOnly"), why(explain, RapidsInputMode.AUTO));
    // A plan of Spark's own operators: RAPIDS did not place it.
    String cpu = why(withRapids(), RapidsInputMode.AUTO).orElseThrow();
    assertTrue(
        cpu.startsWith("RAPIDS did not place the plan on the GPU (its last operator is "), cpu);
    assertFalse(RapidsInput.onGpu(cpuPlan()));
    assertEquals(
        Optional.of("spark.overlap.enabled=false"),
        RapidsInput.whyNot(withRapids()::get, RapidsInputMode.AUTO, false, cpuPlan(), true));
    // Under adaptive execution ColumnarRdd converts rows instead of handing over its batches.
    SparkSession aqe = spark.newSession();
    aqe.conf().set("spark.sql.adaptive.enabled", "true");
    SparkPlan adaptive =
        TestData.frame(aqe, 10, 2).groupBy("b").count().queryExecution().executedPlan();
    assertTrue(
        adaptive instanceof org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec,
        adaptive.getClass().getName());
    assertEquals(
        Optional.of(RapidsInput.ADAPTIVE),
        RapidsInput.whyNot(withRapids()::get, RapidsInputMode.AUTO, true, adaptive, true));
  }

  @Test
  void columnsColumnarRddDoesNotExportAreNamed() {
    // ColumnarRdd throws for these types: the batches are not asked for, whatever the plan.
    SparkPlan wide = TestData.frame(spark, 10, 1).queryExecution().executedPlan();
    assertEquals(
        Optional.of(
            "column 'dec38' is decimal(38,10), which RAPIDS' ColumnarRdd does not export"
                + " (decimals of up to 18 digits, timestamps with a time zone)"),
        RapidsInput.whyNot(withRapids()::get, RapidsInputMode.AUTO, true, wide, true));
    SparkPlan ntz =
        TestData.frame(spark, 10, 1).select("id", "ntz").queryExecution().executedPlan();
    assertTrue(
        RapidsInput.notExported(ntz.schema())
            .orElseThrow()
            .startsWith("column 'ntz' is timestamp_ntz"));
    SparkPlan exported =
        TestData.frame(spark, 10, 1).drop("dec38", "ntz").queryExecution().executedPlan();
    assertEquals(Optional.empty(), RapidsInput.notExported(exported.schema()));
    assertEquals(
        Optional.empty(),
        RapidsInput.notExported(
            new org.apache.spark.sql.types.StructType()
                .add("d18", org.apache.spark.sql.types.DataTypes.createDecimalType(18, 2))));
    // Inside a nested column too.
    assertTrue(
        RapidsInput.notExported(
                new org.apache.spark.sql.types.StructType()
                    .add(
                        "when",
                        org.apache.spark.sql.types.DataTypes.createArrayType(
                            org.apache.spark.sql.types.DataTypes.TimestampNTZType)))
            .orElseThrow()
            .startsWith("column 'when' is array<timestamp_ntz>, holding timestamp_ntz"));
    assertEquals(
        Optional.empty(), RapidsInput.notExported(dev.overlap.executor.testing.NestedData.SCHEMA));
  }

  @Test
  void aPlainScanIsPlannedAgainInAnotherSessionWithRapidsOff() throws Exception {
    SparkSession s = spark.newSession();
    String dir = java.nio.file.Files.createTempDirectory("rapids-replan").resolve("t").toString();
    TestData.frame(s, 20, 1).drop("dec38", "ntz").write().parquet(dir);
    var ds = (org.apache.spark.sql.classic.Dataset<org.apache.spark.sql.Row>) s.read().parquet(dir);
    s.conf().set("spark.rapids.sql.enabled", "true");
    SparkPlan again = RapidsInput.planWithoutRapids(ds);
    // Planned in a clone with RAPIDS off; the job's session is never touched (another thread may
    // plan in it at the same time).
    assertEquals("false", again.session().conf().get("spark.rapids.sql.enabled"));
    assertFalse(again.session() == s);
    assertEquals("true", s.conf().get("spark.rapids.sql.enabled"));
    assertTrue(ColumnarPlans.columnar(again).parquetScan() != null, again.treeString());
    // Which logical plans are candidates: projections over one Parquet relation.
    assertTrue(RapidsInput.plainParquet(ds.queryExecution().optimizedPlan()));
    var selected =
        (org.apache.spark.sql.classic.Dataset<org.apache.spark.sql.Row>)
            s.read().parquet(dir).selectExpr("i64", "s", "i32 + 1 as j").alias("x");
    assertTrue(RapidsInput.plainParquet(selected.queryExecution().optimizedPlan()));
    var filtered =
        (org.apache.spark.sql.classic.Dataset<org.apache.spark.sql.Row>)
            s.read().parquet(dir).filter("i64 > 3");
    assertFalse(RapidsInput.plainParquet(filtered.queryExecution().optimizedPlan()));
    var rows =
        (org.apache.spark.sql.classic.Dataset<org.apache.spark.sql.Row>) TestData.frame(s, 5, 1);
    assertFalse(RapidsInput.plainParquet(rows.queryExecution().optimizedPlan()));
    assertTrue(RapidsInput.inPlugins(withRapids()::get));
    assertFalse(RapidsInput.inPlugins(Map.of("spark.plugins", "x.SQLPlugin")::get));
    assertEquals(Optional.empty(), RapidsInput.rapidsOff(withRapids()::get));
  }

  @Test
  void aPlainScanIsOverlapsFirstUnlessRapidsBatchesAreAskedForOrOverlapCannotDecodeIt() {
    var auto = RapidsInputMode.AUTO;
    var gpu = ParquetDecodeMode.AUTO;
    assertTrue(RapidsInput.ownScanFirst(withRapids()::get, auto, true, gpu));
    assertTrue(RapidsInput.ownScanFirst(withRapids()::get, RapidsInputMode.OFF, true, gpu));
    // A write never takes RAPIDS' batches: no setting.
    assertTrue(RapidsInput.ownScanFirst(withRapids()::get, null, true, gpu));
    assertFalse(RapidsInput.ownScanFirst(withRapids()::get, RapidsInputMode.ALWAYS, true, gpu));
    // Overlap off: the CPU kernel keeps RAPIDS' GPU scan rather than Spark's CPU reader.
    assertFalse(RapidsInput.ownScanFirst(withRapids()::get, auto, false, gpu));
    // Overlap would decode on the host: RAPIDS' scan is the better one.
    assertFalse(RapidsInput.ownScanFirst(withRapids()::get, auto, true, ParquetDecodeMode.HOST));
    Map<String, String> off = withRapids();
    off.put("spark.rapids.sql.enabled", "false");
    assertFalse(RapidsInput.ownScanFirst(off::get, auto, true, gpu));
    assertFalse(RapidsInput.ownScanFirst(Map.<String, String>of()::get, auto, true, gpu));
    // The reasons that need no plan come first, and say the same as whyNot.
    SparkPlan wide = TestData.frame(spark, 10, 1).queryExecution().executedPlan();
    assertEquals(
        RapidsInput.whyNot(withRapids()::get, auto, true, wide, true),
        RapidsInput.beforePlanning(withRapids()::get, auto, true, wide.schema(), true));
    assertEquals(
        Optional.empty(),
        RapidsInput.beforePlanning(
            withRapids()::get,
            auto,
            true,
            TestData.frame(spark, 1, 1).drop("dec38", "ntz").schema(),
            true));
  }

  @Test
  void withoutRapidsTheInputPathIsUnchangedAndNothingIsSaid() {
    assertFalse(RapidsInput.present(RapidsInputTest.class.getClassLoader()));
    SparkSession s = spark.newSession();
    s.conf().set("spark.overlap.rapids.input", "AUTO");
    // spark.plugins is fixed at start: this session has no RAPIDS and no Overlap plugin, so the
    // kernel's CPU implementation runs and nothing is said about RAPIDS.
    PipelineReport report = PipelineReport.create(s);
    long n = GpuPartitions.map(TestData.frame(s, 50, 2), new AllTypesKernel(), report).count();
    assertEquals(50, n);
    assertEquals(Optional.empty(), report.rapidsNotTaken());
  }
}
