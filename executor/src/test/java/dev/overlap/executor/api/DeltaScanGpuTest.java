package dev.overlap.executor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.testing.AllTypesKernel;
import dev.overlap.executor.testing.GpuSession;
import dev.overlap.executor.testing.TestData;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A Delta table given to {@link GpuPartitions#map} as {@code spark.read.format("delta")} reads it,
 * on a real GPU: a plain table's files (every supported type, nulls, several files and row groups;
 * its latest version and an older one) and a table's with deletion vectors are decoded by the GPU's
 * Parquet scan; a table under column mapping comes as Spark's columnar batches, the report saying
 * why. The kernel's values are Spark SQL's over Spark's own read. Nothing leaks.
 */
@Tag("gpu")
class DeltaScanGpuTest {
  private static SparkSession spark;
  private static Path root;

  @BeforeAll
  static void start() throws Exception {
    root = Files.createTempDirectory("overlap-delta-scan");
    spark =
        GpuSession.start(
            "gpu-delta-scan",
            "local[4]",
            Map.of(
                "spark.sql.extensions",
                "io.delta.sql.DeltaSparkSessionExtension",
                "spark.sql.catalog.spark_catalog",
                "org.apache.spark.sql.delta.catalog.DeltaCatalog",
                "spark.databricks.delta.snapshotPartitions",
                "2",
                "spark.overlap.prefetch.maxBytes",
                "8m"));
  }

  @AfterEach
  void nothingHeld() {
    GpuSession.assertNothingHeld(spark);
  }

  @AfterAll
  static void stop() {
    GpuSession.stop(spark);
  }

  /** The kernel over {@code in} against Spark SQL's same columns over Spark's own read. */
  private static PipelineReport sameAsSpark(Dataset<Row> in) {
    PipelineReport report = PipelineReport.create(spark);
    List<String> got =
        TestData.sorted(GpuPartitions.map(in, new AllTypesKernel(), report).collectAsList());
    assertEquals(TestData.sorted(in.selectExpr(AllTypesKernel.SQL).collectAsList()), got);
    return report;
  }

  private static String table(String name) {
    return root.resolve(name).toString();
  }

  /** Every task decoded its files on the GPU, and none on the host. */
  private static void allOnTheGpusParquetScan(PipelineReport r, long rows) {
    assertEquals(List.of(), r.parquetFallbacks());
    assertEquals(0, r.cpuTasks());
    assertTrue(r.gpuTasks(InputPath.PARQUET) > 0, "tasks: " + r.gpuTasks(InputPath.PARQUET));
    assertEquals(r.gpuTasks(), r.gpuTasks(InputPath.PARQUET));
    assertEquals(rows, r.rowsIn());
    assertTrue(r.parquetRowGroups() >= r.parquetFiles() && r.parquetFiles() > 1);
  }

  @Test
  void aPlainTableAndItsOlderVersionAreDecodedByTheGpusParquetScan() {
    String t = table("plain");
    TestData.frame(spark, 40_000, 3)
        .write()
        .format("delta")
        .option("parquet.block.size", 64 * 1024)
        .save(t);
    // Version 1 rewrites some files: version 0 still reads its own.
    spark.sql("UPDATE delta.`" + t + "` SET i32 = i32 + 7 WHERE id % 5 = 0");
    spark.conf().set("spark.sql.files.maxPartitionBytes", 150 * 1024);
    try {
      allOnTheGpusParquetScan(sameAsSpark(spark.read().format("delta").load(t)), 40_000);
      Dataset<Row> v0 = spark.read().format("delta").option("versionAsOf", 0).load(t);
      allOnTheGpusParquetScan(sameAsSpark(v0), 40_000);
    } finally {
      spark.conf().unset("spark.sql.files.maxPartitionBytes");
    }
  }

  @Test
  void aTableWithDeletionVectorsIsDecodedByTheGpusParquetScanItsRowsDropped() {
    String t = table("vectors");
    TestData.frame(spark, 30_000, 2)
        .write()
        .format("delta")
        .option("delta.enableDeletionVectors", "true")
        .save(t);
    spark.sql("DELETE FROM delta.`" + t + "` WHERE id % 3 = 0");
    Dataset<Row> in = spark.read().format("delta").load(t);
    PipelineReport r = sameAsSpark(in);
    assertEquals(List.of(), r.parquetFallbacks());
    assertTrue(r.gpuTasks(InputPath.PARQUET) > 0);
    assertEquals(r.gpuTasks(), r.gpuTasks(InputPath.PARQUET));
    assertEquals(20_000, in.count());
    assertEquals(20_000, r.rowsIn(), "the rows the vectors list are not the kernel's");
  }

  @Test
  void aTableUnderColumnMappingComesAsSparksBatchesAndTheReportSaysWhy() {
    String t = table("mapped");
    TestData.frame(spark, 10_000, 2)
        .write()
        .format("delta")
        .option("delta.columnMapping.mode", "name")
        .save(t);
    PipelineReport r = sameAsSpark(spark.read().format("delta").load(t));
    assertEquals(0, r.gpuTasks(InputPath.PARQUET));
    assertEquals(r.gpuTasks(), r.gpuTasks(InputPath.COLUMNAR));
    assertEquals(1, r.parquetFallbacks().size(), r.parquetFallbacks().toString());
    assertTrue(
        r.parquetFallbacks().get(0).contains("(column mapping, mode name)"),
        r.parquetFallbacks().get(0));
  }
}
