package dev.overlap.executor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.plan.NestedColumnsTest;
import dev.overlap.executor.testing.GpuSession;
import dev.overlap.executor.testing.NestedData;
import dev.overlap.executor.testing.NormalizeKernel;
import dev.overlap.executor.testing.PassThroughKernel;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Arrays, structs, maps and binary on a real GPU, nulls at every level and three levels deep:
 * through the row path, the GPU Parquet scan, the host path's columnar batches, rows back and the
 * GPU Parquet write, equal to Spark's own values; an embedding kernel equal to Spark SQL's
 * higher-order functions within a float's rounding. Nothing leaks.
 */
@Tag("gpu")
class NestedTypesGpuTest {
  private static SparkSession spark;
  private static Path root;

  @BeforeAll
  static void start() throws Exception {
    root = Files.createTempDirectory("overlap-nested-gpu");
    spark = GpuSession.start("gpu-nested", "local[4]", Map.of());
  }

  @AfterEach
  void nothingHeld() {
    GpuSession.assertNothingHeld(spark);
  }

  @AfterAll
  static void stop() {
    GpuSession.stop(spark);
  }

  private static PipelineReport passedThrough(Dataset<Row> in, InputPath path) {
    PipelineReport report = PipelineReport.create(spark);
    Dataset<Row> out = GpuPartitions.map(in, new PassThroughKernel(), report);
    assertEquals(NestedColumnsTest.byId(in), NestedColumnsTest.byId(out));
    assertTrue(report.gpuTasks(path) > 0, "tasks on " + path + ": " + report.gpuTasks(path));
    assertEquals(0, report.cpuTasks());
    assertTrue(report.gpuNotTaken().isEmpty());
    return report;
  }

  @Test
  void rowsRoundTripThroughTheGpu() {
    passedThrough(NestedData.frame(spark, 5_000, 3), InputPath.ROWS);
  }

  @ParameterizedTest
  @ValueSource(strings = {"snappy", "zstd", "none"})
  void sparksParquetFilesDecodeOnTheGpuAsSparkReadsThem(String codec) {
    String dir = root.resolve("scan-" + codec).toString();
    NestedData.frame(spark, 20_000, 3)
        .write()
        .option("compression", codec)
        .option("parquet.block.size", 256 * 1024)
        .parquet(dir);
    PipelineReport r = passedThrough(spark.read().parquet(dir), InputPath.PARQUET);
    System.out.println("nested scan " + codec + ": fallbacks " + r.parquetFallbacks());
    assertEquals(List.of(), r.parquetFallbacks());
    assertEquals(r.gpuTasks(), r.gpuTasks(InputPath.PARQUET));
  }

  @Test
  void someColumnsOfANestedFileDecodeOnTheGpuThroughAFooterNamingOnlyThem() {
    String dir = root.resolve("projection").toString();
    NestedData.frame(spark, 8_000, 2).write().parquet(dir);
    Dataset<Row> in = spark.read().parquet(dir).select("props", "id", "rec");
    PipelineReport r = PipelineReport.create(spark);
    Dataset<Row> out = GpuPartitions.map(in, new PassThroughKernel(), r);
    String json = "to_json(named_struct('p', props, 'r', rec), map('ignoreNullFields', 'false'))";
    assertEquals(
        in.selectExpr("id", json).orderBy("id").collectAsList().toString(),
        out.selectExpr("id", json).orderBy("id").collectAsList().toString());
    assertEquals(List.of(), r.parquetFallbacks());
    assertTrue(r.gpuTasks(InputPath.PARQUET) > 0);
  }

  @Test
  void filesOtherWritersWroteDecodeOnTheGpuAsSparkReadsThem() throws Exception {
    for (String name : dev.overlap.executor.task.ParquetPlanOrHostTest.WRITERS) {
      Dataset<Row> in =
          spark.read().parquet(dev.overlap.executor.task.ParquetPlanOrHostTest.writerFile(name));
      PipelineReport r = passedThrough(in, InputPath.PARQUET);
      // Rust's version 2 pages hold strings in DELTA_BYTE_ARRAY encoding: read on the host.
      assertEquals(List.of(), onlyDeltaStrings(r), name);
      assertEquals(0, r.rowsIn() % 700, name + ": " + r.rowsIn());
    }
  }

  @Test
  void sparksPageVersionTwoDecodesOnTheGpu() {
    String dir = root.resolve("v2").toString();
    NestedData.frame(spark, 6_000, 2)
        .write()
        .option("parquet.writer.version", "v2")
        .option("compression", "zstd")
        .parquet(dir);
    // The strings in lists and maps are in DELTA_BYTE_ARRAY encoding: read on the host, with the
    // reason; the other nested columns decode on the GPU.
    PipelineReport all = passedThrough(spark.read().parquet(dir), InputPath.PARQUET);
    assertEquals(List.of(), onlyDeltaStrings(all));
    assertTrue(!all.parquetFallbacks().isEmpty(), "the delta strings were not read on the host");
    String others = root.resolve("v2-no-strings").toString();
    NestedData.frame(spark, 6_000, 2)
        .drop("tags", "props")
        .write()
        .option("parquet.writer.version", "v2")
        .option("compression", "zstd")
        .parquet(others);
    Dataset<Row> in = spark.read().parquet(others);
    PipelineReport r = PipelineReport.create(spark);
    Dataset<Row> out = GpuPartitions.map(in, new PassThroughKernel(), r);
    String json = "to_json(struct(*), map('ignoreNullFields', 'false')) as j";
    assertEquals(
        in.selectExpr(json).orderBy("j").collectAsList(),
        out.selectExpr(json).orderBy("j").collectAsList());
    assertEquals(List.of(), r.parquetFallbacks());
  }

  /** The report's fallbacks other than those for strings in DELTA_BYTE_ARRAY encoding. */
  private static List<String> onlyDeltaStrings(PipelineReport r) {
    return r.parquetFallbacks().stream().filter(f -> !f.contains("DELTA_BYTE_ARRAY")).toList();
  }

  @Test
  void legacyListsAndTheHostPathsBatchesGiveSparksValues() {
    String dir = root.resolve("legacy").toString();
    spark.conf().set("spark.sql.parquet.writeLegacyFormat", "true");
    try {
      NestedData.frame(spark, 5_000, 2).write().parquet(dir);
    } finally {
      spark.conf().unset("spark.sql.parquet.writeLegacyFormat");
    }
    PipelineReport legacy = passedThrough(spark.read().parquet(dir), InputPath.COLUMNAR);
    assertTrue(
        legacy.parquetFallbacks().stream().anyMatch(f -> f.contains("legacy list layout")),
        legacy.parquetFallbacks().toString());
    spark.conf().set("spark.overlap.parquet.decode", "HOST");
    try {
      passedThrough(spark.read().parquet(dir), InputPath.COLUMNAR);
    } finally {
      spark.conf().unset("spark.overlap.parquet.decode");
    }
  }

  @Test
  void theGpuParquetWriteReadsBackWithTheDeclaredTypes() {
    Dataset<Row> df = NestedData.frame(spark, 5_000, 3);
    String dir = root.resolve("write").toString();
    Written w = GpuPartitions.write(df, new PassThroughKernel(), ParquetOutput.to(dir));
    assertTrue(w.gpuTasks() > 0, w.toString());
    Dataset<Row> back = spark.read().parquet(dir);
    // Every column is written as optional, as Spark reads file sources anyway.
    assertEquals(NestedData.SCHEMA.toDDL().replace(" NOT NULL", ""), back.schema().toDDL());
    assertEquals(NestedColumnsTest.byId(df), NestedColumnsTest.byId(back));
  }

  @Test
  void embeddingsNormalizeOnTheGpuAsSparkSqlDoesWithinAFloatsRounding() {
    String dir = root.resolve("emb").toString();
    NestedColumnsTest.embeddings(spark, 30_000).repartition(3).write().parquet(dir);
    Dataset<Row> in = spark.read().parquet(dir);
    PipelineReport report = PipelineReport.create(spark);
    Dataset<Row> gpu = GpuPartitions.map(in, NormalizeKernel.of(in.schema(), "emb"), report);
    Dataset<Row> sql = in.selectExpr("id as sid", NormalizeKernel.sql("emb") + "_sql");
    Row r =
        gpu.join(sql, gpu.col("id").equalTo(sql.col("sid")))
            .selectExpr(
                "count(*)",
                "sum(if((emb is null) <> (emb_sql is null), 1, 0))",
                "sum(if(size(emb) <> size(emb_sql), 1, 0))",
                "sum(if(zip_with(emb, emb_sql, (p, q) -> (p is null) = (q is null))"
                    + " = transform(emb, x -> true), 0, 1))",
                "max(aggregate(zip_with(emb, emb_sql, (p, q) -> abs(p - q) / greatest(abs(q),"
                    + " float(1e-30))), 0D, (m, d) -> greatest(m, coalesce(d, 0D))))")
            .first();
    System.out.println("embeddings GPU against Spark SQL: " + r);
    assertEquals(30_000L, r.getLong(0));
    assertEquals(0L, r.getLong(1), "null embeddings");
    assertEquals(0L, r.getLong(2), "sizes");
    assertTrue(r.getLong(3) <= 30_000 / 11 + 1, "null elements in place: " + r);
    // The sums of squares are added in another order: one float ulp (2^-23) at most.
    assertTrue(r.getDouble(4) <= Math.ulp(1f), "largest relative difference " + r.getDouble(4));
    assertEquals(List.of(), report.parquetFallbacks());
    assertEquals(report.gpuTasks(), report.gpuTasks(InputPath.PARQUET));
  }
}
