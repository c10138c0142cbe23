package dev.overlap.executor.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.testing.LocalSession;
import dev.overlap.executor.testing.NestedData;
import dev.overlap.executor.testing.NoCpuKernel;
import dev.overlap.executor.testing.NormalizeKernel;
import dev.overlap.executor.testing.PassThroughKernel;
import dev.overlap.executor.types.UnsupportedColumnException;
import java.nio.file.Files;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Arrays, structs, maps and binary go through a kernel with Spark's own values, in map and in
 * write; the GPU takes them (nothing is reported not taken). Columns it does not take (intervals,
 * an array of them) reach the kernel's CPU implementation on every executor, the report saying why;
 * a kernel without a CPU implementation, or a job that forbids the CPU path, is refused before any
 * work, naming the columns.
 */
public class NestedColumnsTest {
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark =
        LocalSession.start(
            "local[2]", "nested", "spark.plugins", "dev.overlap.executor.OverlapPlugin");
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  /**
   * Rows sorted by id, each as Spark's JSON of its values: every nested value and null at every
   * level (nulls written, not left out), the bytes as base64.
   */
  public static List<String> byId(Dataset<Row> df) {
    return df
        .selectExpr(
            "id",
            "to_json(named_struct('t', tags, 'e', emb, 'r', rec, 'p', props, 'b', base64(blob)),"
                + " map('ignoreNullFields', 'false')) as j")
        .orderBy("id")
        .collectAsList()
        .stream()
        .map(r -> r.getLong(0) + " " + r.getString(1))
        .toList();
  }

  /** Intervals, which the GPU does not take, alone and in an array. */
  private static Dataset<Row> intervals(int rows) {
    return spark
        .range(rows)
        .selectExpr(
            "id",
            "make_dt_interval(0, 0, 0, id) as span",
            "array(make_dt_interval(0, 0, id)) as spans");
  }

  @Test
  void nestedAndBinaryColumnsMapWithSparksValuesAndNothingNotTaken() {
    Dataset<Row> df = NestedData.frame(spark, 700, 3);
    PipelineReport report = PipelineReport.create(spark);
    Dataset<Row> out = GpuPartitions.map(df, new PassThroughKernel(), report);
    assertEquals(NestedData.SCHEMA, out.schema());
    List<String> want = byId(df);
    assertEquals(want, byId(out));
    // The cases are all there: a null list, an empty one, one holding a null, and so on.
    assertTrue(
        want.contains(
            "2 {\"t\":[\"a2\",null,\"b\"],\"e\":[1.0,-1.0,\"NaN\"],\"r\":{\"a\":2,\"b\":{\"c\":\"c2\",\"d\":null}},\"p\":null,\"b\":\"AgD+\"}"),
        want.get(2));
    assertTrue(report.gpuNotTaken().isEmpty(), String.valueOf(report.gpuNotTaken()));
  }

  @Test
  void filesOtherWritersWroteMapWithSparksValues() throws Exception {
    for (String name : dev.overlap.executor.task.ParquetPlanOrHostTest.WRITERS) {
      Dataset<Row> in =
          spark.read().parquet(dev.overlap.executor.task.ParquetPlanOrHostTest.writerFile(name));
      assertEquals(byId(in), byId(GpuPartitions.map(in, new PassThroughKernel())), name);
      // One run, counted (sorting runs the job twice: once to sample).
      PipelineReport report = PipelineReport.create(spark);
      assertEquals(700, GpuPartitions.map(in, new PassThroughKernel(), report).count(), name);
      assertEquals(700, report.rowsIn(), name);
    }
  }

  /** Embeddings with a null one, a null element and an empty one among them. */
  public static Dataset<Row> embeddings(SparkSession spark, int rows) {
    return spark
        .range(rows)
        .selectExpr(
            "id",
            "case when id % 11 = 0 then null when id % 13 = 0 then array()"
                + " when id % 17 = 0 then array(float(1), null, float(id))"
                + " else transform(sequence(0, 63), i -> float(sin(id * 0.01 + i) + 1.5)) end as emb");
  }

  @Test
  void theEmbeddingKernelsCpuImplementationIsSparkSqlsHigherOrderFunctions() {
    Dataset<Row> df = embeddings(spark, 500).repartition(2);
    Dataset<Row> out = GpuPartitions.map(df, NormalizeKernel.of(df.schema(), "emb"));
    List<Row> want = df.selectExpr("id", NormalizeKernel.sql("emb")).orderBy("id").collectAsList();
    assertEquals(want.toString(), out.orderBy("id").collectAsList().toString());
    // Each embedding is of unit length.
    Row lengths =
        out.selectExpr("aggregate(emb, 0D, (a, y) -> a + coalesce(double(y) * y, 0D)) as n")
            .where("id % 11 <> 0 and id % 13 <> 0")
            .selectExpr("min(n)", "max(n)")
            .first();
    assertEquals(1.0, lengths.getDouble(0), 1e-6);
    assertEquals(1.0, lengths.getDouble(1), 1e-6);
  }

  @Test
  void columnsTheGpuDoesNotTakeReachTheCpuImplementationAsSparkReadsThem() {
    Dataset<Row> df = intervals(700).repartition(3);
    PipelineReport report = PipelineReport.create(spark);
    Dataset<Row> out = GpuPartitions.map(df, new PassThroughKernel(), report);
    assertEquals(df.schema(), out.schema());
    assertEquals(
        df.orderBy("id").collectAsList().toString(), out.orderBy("id").collectAsList().toString());
    // One run of the job, counted: every task on the CPU path.
    PipelineReport once = PipelineReport.create(spark);
    assertEquals(700, GpuPartitions.map(df, new PassThroughKernel(), once).count());
    assertEquals(0, once.gpuTasks());
    assertEquals(3, once.cpuTasks());
    assertEquals(700, once.rowsIn());
    String why = report.gpuNotTaken().orElseThrow();
    assertTrue(
        why.contains("'span' (interval day to second), 'spans' (array<interval day to second>)"),
        why);
  }

  @Test
  void aWriteOfNestedColumnsReadsBackAsItsInput() throws Exception {
    Dataset<Row> df = NestedData.frame(spark, 300, 2);
    String dir = Files.createTempDirectory("overlap-nested-write").resolve("out").toString();
    GpuPartitions.write(df, new PassThroughKernel(), ParquetOutput.to(dir));
    Dataset<Row> back = spark.read().parquet(dir);
    assertEquals(NestedData.SCHEMA.fieldNames().length, back.schema().fields().length);
    assertEquals(byId(df), byId(back));
  }

  @Test
  void aSupportedSchemaReportsNothingNotTaken() {
    PipelineReport report = PipelineReport.create(spark);
    GpuPartitions.map(spark.range(10).toDF(), new PassThroughKernel(), report).count();
    assertTrue(report.gpuNotTaken().isEmpty());
  }

  @Test
  void withoutACpuImplementationOrWithTheCpuPathForbiddenItIsRefusedNamingTheColumns() {
    Dataset<Row> df = intervals(10);
    UnsupportedColumnException e =
        assertThrows(
            UnsupportedColumnException.class, () -> GpuPartitions.map(df, new NoCpuKernel()));
    assertTrue(e.getMessage().contains("'span' (interval day to second)"), e.getMessage());
    assertTrue(e.getMessage().contains("give the kernel a cpu() implementation"), e.getMessage());
    spark.conf().set("spark.overlap.noGpu.mode", "FAIL");
    try {
      UnsupportedColumnException f =
          assertThrows(
              UnsupportedColumnException.class,
              () -> GpuPartitions.map(df, new PassThroughKernel()));
      assertTrue(
          f.getMessage().contains("'spans' (array<interval day to second>)"), f.getMessage());
      assertTrue(f.getMessage().contains("spark.overlap.noGpu.mode=FAIL"), f.getMessage());
    } finally {
      spark.conf().unset("spark.overlap.noGpu.mode");
    }
  }
}
