package dev.overlap.jobs.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.Rmm;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.InputPath;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.jobs.etl.EtlInputs;
import dev.overlap.jobs.etl.TestEtl;
import java.nio.file.Path;
import java.util.Locale;
import java.util.OptionalLong;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link DeltaInputTest}'s tables on the GPU path: etl's kernels over each equal Spark SQL over
 * Spark's own read of the table, and each takes the input path its route gives: a plain table's
 * files (also after an update, a schema evolution, and an older version) are decoded by the GPU's
 * Parquet scan, a table with deletion vectors too (the rows its vectors list dropped on the device,
 * whole row groups of them among them), a table under column mapping as Spark's columnar batches.
 * It fails, never skips, where the executor does not run on a GPU.
 */
@Tag("gpu")
public class DeltaInputGpuTest {
  @TempDir static Path tmp;
  static SparkSession spark;
  static Dataset<Row> lineitem;

  @BeforeAll
  static void start() {
    spark =
        DeltaTables.session(
            true, "spark.overlap.batch.maxRows", "700", "spark.overlap.noGpu.mode", "FAIL");
    lineitem = DeltaTables.lineitem(spark, 0.002, 3).cache();
  }

  @AfterAll
  static void stop() {
    if (spark == null) {
      return;
    }
    try {
      assertEquals(0, Rmm.getTotalBytesAllocated(), "device memory leaked");
    } finally {
      spark.stop();
    }
  }

  /** etl's Q1 and Q6 over the table against Spark SQL's; both reports show {@code path} alone. */
  private static void sameAsSpark(String name, Path table, OptionalLong version, InputPath path) {
    assertTrue(GpuStatus.current().gpu(), "no GPU: " + GpuStatus.current().reason());
    DeltaInput in = DeltaInput.read(spark, table.toString(), version);
    var reader = spark.read().format("delta");
    if (version.isPresent()) {
      reader = reader.option("versionAsOf", version.getAsLong());
    }
    reader.load(table.toString()).createOrReplaceTempView("truth_" + name);
    PipelineReport r1 = PipelineReport.create(spark);
    PipelineReport r6 = PipelineReport.create(spark);
    String view = "truth_" + name;
    EtlInputs.assertSame(
        spark.sql(String.format(Locale.ROOT, EtlInputs.Q1, view)),
        TestEtl.q1(in.rows(), r1),
        name + " Q1: " + in.line());
    EtlInputs.assertSame(
        spark.sql(String.format(Locale.ROOT, EtlInputs.Q6, view)),
        TestEtl.q6(in.rows(), r6),
        name + " Q6: " + in.line());
    for (PipelineReport r : new PipelineReport[] {r1, r6}) {
      assertEquals(0, r.cpuTasks(), name + ": no task ran on the CPU path");
      assertTrue(r.gpuTasks(path) > 0, name + ": " + path + " tasks; " + in.line());
      assertEquals(r.gpuTasks(), r.gpuTasks(path), name + ": every task on " + path);
    }
  }

  @Test
  void aPlainTableIsDecodedByTheGpusParquetScan() {
    Path t = tmp.resolve("plain");
    DeltaTables.write(lineitem, t);
    sameAsSpark("plain", t, OptionalLong.empty(), InputPath.PARQUET);
  }

  @Test
  void anUpdatedTableAndItsOlderVersionAreDecodedByTheGpusParquetScan() {
    Path t = tmp.resolve("updated");
    DeltaTables.write(lineitem, t);
    DeltaTables.sql(spark, t, "UPDATE {t} SET l_discount = 0.10 WHERE l_orderkey % 4 = 0");
    sameAsSpark("updated", t, OptionalLong.empty(), InputPath.PARQUET);
    sameAsSpark("updated_v0", t, OptionalLong.of(0), InputPath.PARQUET);
  }

  @Test
  void aSchemaEvolutionsOlderFilesGiveNullsOnTheGpusParquetScan() {
    Path t = tmp.resolve("evolved");
    DeltaTables.write(lineitem.where("l_orderkey % 2 = 1").drop("l_tax"), t);
    lineitem
        .where("l_orderkey % 2 = 0")
        .write()
        .format("delta")
        .mode("append")
        .option("mergeSchema", "true")
        .save(t.toString());
    sameAsSpark("evolved", t, OptionalLong.empty(), InputPath.PARQUET);
  }

  @Test
  void aTableWithDeletionVectorsIsDecodedByTheGpusParquetScanItsRowsDropped() {
    Path t = tmp.resolve("vectors");
    DeltaTables.withDeletionVectors(lineitem, t, "l_orderkey % 3 = 0");
    sameAsSpark("vectors", t, OptionalLong.empty(), InputPath.PARQUET);
  }

  @Test
  void wholeRowGroupsDeletedGiveEmptyBatchesOnTheGpusParquetScan() {
    Path t = tmp.resolve("vectors-sorted");
    // One file of small row groups in key order: the range deleted covers whole row groups (each
    // a batch of its own here), the other keys some rows of every group.
    var hadoop = spark.sparkContext().hadoopConfiguration();
    String before = hadoop.get("parquet.block.size");
    hadoop.setInt("parquet.block.size", 16 * 1024);
    try {
      DeltaTables.withDeletionVectors(
          lineitem.orderBy("l_orderkey").coalesce(1),
          t,
          "l_orderkey between 2000 and 6000 or l_linenumber = 2");
    } finally {
      if (before == null) {
        hadoop.unset("parquet.block.size");
      } else {
        hadoop.set("parquet.block.size", before);
      }
    }
    sameAsSpark("vectors_sorted", t, OptionalLong.empty(), InputPath.PARQUET);
  }

  @Test
  void aRenamedColumnUnderColumnMappingComesAsSparksColumnarBatches() {
    Path t = tmp.resolve("renamed");
    DeltaTables.withRenamedColumn(lineitem, t);
    sameAsSpark("renamed", t, OptionalLong.empty(), InputPath.COLUMNAR);
  }
}
