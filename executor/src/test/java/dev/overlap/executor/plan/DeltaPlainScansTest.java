package dev.overlap.executor.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.input.parquet.FilePlan;
import dev.overlap.executor.testing.LocalSession;
import dev.overlap.executor.testing.PassThroughKernel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A Delta table read with {@code spark.read.format("delta")}, as the driver plans a kernel over it
 * without a GPU: a table whose files are plain Parquet (no deletion vectors, no column mapping, no
 * partition columns) is the GPU's Parquet scan over the files of the version read, whether or not
 * RAPIDS plans the session; one under column mapping (with deletion vectors or without) or with
 * partition columns is left to Spark's Delta reader, and the job's report says why. Each gives
 * Spark's rows through the kernel.
 */
class DeltaPlainScansTest {
  private static SparkSession spark;
  private static String plain;
  private static String mapped;
  private static String mappedWithVectors;
  private static String partitioned;

  @BeforeAll
  static void start() throws Exception {
    spark =
        LocalSession.start(
            "local[2]",
            "delta-plain",
            "spark.sql.extensions",
            "io.delta.sql.DeltaSparkSessionExtension",
            "spark.sql.catalog.spark_catalog",
            "org.apache.spark.sql.delta.catalog.DeltaCatalog",
            "spark.databricks.delta.snapshotPartitions",
            "1");
    Path root = Files.createTempDirectory("overlap-delta-plain");
    Dataset<Row> rows =
        spark
            .range(0, 6000)
            .selectExpr("id", "cast(id % 11 as int) as n", "concat('v', id) as s")
            .coalesce(2);
    plain = root.resolve("plain").toString();
    rows.write().format("delta").save(plain);
    // Version 1 rewrites the files holding even ids: version 0's files are not all the latest's.
    spark.sql("UPDATE delta.`" + plain + "` SET n = n + 100 WHERE id % 2 = 0");
    mapped = root.resolve("mapped").toString();
    rows.write().format("delta").save(mapped);
    spark.sql(
        "ALTER TABLE delta.`"
            + mapped
            + "` SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name',"
            + " 'delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5')");
    spark.sql("ALTER TABLE delta.`" + mapped + "` RENAME COLUMN n TO m");
    mappedWithVectors = root.resolve("mapped-vectors").toString();
    rows.write().format("delta").save(mappedWithVectors);
    spark.sql(
        "ALTER TABLE delta.`"
            + mappedWithVectors
            + "` SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true',"
            + " 'delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '3',"
            + " 'delta.minWriterVersion' = '7')");
    spark.sql("ALTER TABLE delta.`" + mappedWithVectors + "` RENAME COLUMN n TO m");
    spark.sql("DELETE FROM delta.`" + mappedWithVectors + "` WHERE id % 5 = 0");
    partitioned = root.resolve("partitioned").toString();
    rows.selectExpr("id", "s", "n % 3 as k")
        .write()
        .format("delta")
        .partitionBy("k")
        .save(partitioned);
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  private static Dataset<Row> delta(String table) {
    return spark.read().format("delta").load(table);
  }

  /** The files the planned GPU scan reads, as paths. */
  private static Set<String> filesPlanned(PlannedInput.Parquet p) throws Exception {
    Set<String> out = new TreeSet<>();
    for (int i = 0; i < p.batches().getNumPartitions(); i++) {
      for (FilePlan f : p.input().plan(i)) {
        out.add(new org.apache.hadoop.fs.Path(f.split().path()).toUri().getPath());
      }
    }
    return out;
  }

  /** The files Spark's Delta reader reads for {@code df}, as paths. */
  private static Set<String> filesRead(Dataset<Row> df) {
    Set<String> out = new TreeSet<>();
    for (String f : df.inputFiles()) {
      out.add(new org.apache.hadoop.fs.Path(f).toUri().getPath());
    }
    return out;
  }

  /** The kernel's rows over {@code df} (here on the CPU path) against Spark's own, sorted. */
  private static void kernelGivesSparksRows(Dataset<Row> df, PipelineReport report) {
    List<String> want = df.collectAsList().stream().map(Row::toString).sorted().toList();
    List<String> got =
        GpuPartitions.map(df, new PassThroughKernel(), report).collectAsList().stream()
            .map(Row::toString)
            .sorted()
            .toList();
    assertEquals(want, got);
  }

  @Test
  void aPlainTableReadAsDeltaIsTheGpusParquetScanOfItsFiles() throws Exception {
    Dataset<Row> df = delta(plain).select("s", "id", "n");
    PipelineReport report = PipelineReport.create(spark);
    PlannedInput planned = InputPlanner.forMap(JobSetup.of(df, new PassThroughKernel(), report));
    PlannedInput.Parquet p = assertInstanceOf(PlannedInput.Parquet.class, planned);
    assertEquals(-1, p.deletedColumn(), "no deletion vectors to apply");
    assertEquals(filesRead(df), filesPlanned(p));
    assertEquals(List.of(), report.parquetFallbacks());
    assertInstanceOf(
        PlannedInput.Parquet.class,
        InputPlanner.forWrite(JobSetup.of(df, new PassThroughKernel(), null)));
    // Beside RAPIDS the scan is planned before RAPIDS' rules: the same scan is found there.
    ColumnarPlans.Columnar own =
        InputPlanner.ownParquetScan((org.apache.spark.sql.classic.Dataset<Row>) df);
    assertNotNull(own);
    assertNotNull(own.parquetScan());
    assertEquals(-1, own.deletedColumn());
    kernelGivesSparksRows(df, report);
    assertEquals(List.of(), report.parquetFallbacks());
  }

  @Test
  void anOlderVersionIsTheGpusParquetScanOfThatVersionsFiles() throws Exception {
    Dataset<Row> v0 = spark.read().format("delta").option("versionAsOf", 0).load(plain);
    PlannedInput planned = InputPlanner.forMap(JobSetup.of(v0, new PassThroughKernel(), null));
    Set<String> files = filesPlanned(assertInstanceOf(PlannedInput.Parquet.class, planned));
    assertEquals(filesRead(v0), files);
    assertNotEquals(filesRead(delta(plain)), files, "the update rewrote some files");
    kernelGivesSparksRows(v0, null);
    assertEquals(0, v0.where("n >= 100").count());
  }

  @Test
  void aTableUnderColumnMappingIsLeftToDeltasReaderAndTheReportSaysWhy() {
    Dataset<Row> df = delta(mapped).select("id", "m");
    PipelineReport report = PipelineReport.create(spark);
    PlannedInput planned = InputPlanner.forMap(JobSetup.of(df, new PassThroughKernel(), report));
    assertInstanceOf(PlannedInput.Columnar.class, planned, "Spark's vectorized Delta reader");
    List<String> why = report.parquetFallbacks();
    assertEquals(1, why.size(), why.toString());
    assertTrue(why.get(0).contains("(column mapping, mode name)"), why.get(0));
    assertTrue(why.get(0).contains(Path.of(mapped).getFileName().toString()), why.get(0));
    // The files still name the column as it was written: read by name, 'm' would be all nulls.
    assertTrue(List.of(spark.read().parquet(mapped).columns()).contains("n"));
    kernelGivesSparksRows(df, null);
  }

  @Test
  void deletionVectorsUnderColumnMappingAreLeftToDeltasRowsAndTheReportSaysWhy() {
    Dataset<Row> df = delta(mappedWithVectors).select("m", "id");
    PipelineReport report = PipelineReport.create(spark);
    PlannedInput planned = InputPlanner.forMap(JobSetup.of(df, new PassThroughKernel(), report));
    assertInstanceOf(PlannedInput.Rows.class, planned, "Spark's filter of the deleted rows");
    List<String> why = report.parquetFallbacks();
    assertEquals(1, why.size(), why.toString());
    assertTrue(why.get(0).contains("(column mapping, mode name)"), why.get(0));
    assertEquals(4800, df.count());
    kernelGivesSparksRows(df, null);
  }

  @Test
  void aPartitionedTableIsLeftToDeltasReaderAndTheReportSaysWhy() {
    Dataset<Row> df = delta(partitioned).select("id", "s");
    PipelineReport report = PipelineReport.create(spark);
    PlannedInput planned = InputPlanner.forWrite(JobSetup.of(df, new PassThroughKernel(), report));
    assertTrue(!(planned instanceof PlannedInput.Parquet), planned.getClass().getName());
    assertEquals(
        List.of(
            "the Delta table file:"
                + partitioned
                + " is read by Spark's Delta reader, not the GPU's Parquet scan: its partition"
                + " columns (k) come from the log"),
        report.parquetFallbacks());
  }

  @Test
  void aPlainTablesScanUnderAFilterOfTheJobsOwnGivesNoDeltaReason() {
    Dataset<Row> df = delta(plain).where("id > 5");
    PipelineReport report = PipelineReport.create(spark);
    PlannedInput planned = InputPlanner.forMap(JobSetup.of(df, new PassThroughKernel(), report));
    assertTrue(!(planned instanceof PlannedInput.Parquet), planned.getClass().getName());
    assertEquals(List.of(), report.parquetFallbacks());
  }
}
