package dev.overlap.executor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.Table;
import dev.overlap.executor.config.NoGpuMode;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.plugin.ExecutorState;
import dev.overlap.executor.testing.AllTypesKernel;
import dev.overlap.executor.testing.GpuSession;
import dev.overlap.executor.testing.TestData;
import java.nio.file.Files;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * GpuPartitions.map on a real GPU in a local Spark session: every supported type, with nulls,
 * through the row path and the columnar (Parquet) path, equals Spark SQL on the CPU; nothing leaks.
 * Small staging buffers force many batches per partition and many tasks through the pipeline.
 */
@Tag("gpu")
class GpuPartitionsGpuTest {
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark =
        GpuSession.start(
            "gpu-suite",
            "local[4]",
            Map.of("spark.overlap.batch.maxRows", "700", "spark.overlap.prefetch.maxBytes", "2m"));
  }

  @AfterEach
  void nothingHeld() {
    GpuSession.assertNothingHeld(spark);
  }

  @AfterAll
  static void stop() {
    GpuSession.stop(spark);
  }

  @Test
  void theExecutorRunsOnTheGpu() {
    assertTrue(GpuStatus.current().gpu(), GpuStatus.current().reason());
    assertTrue(ExecutorState.runtime().orElseThrow().stagingPinned());
  }

  @Test
  void rowsOfEveryTypeMatchSparkSql() {
    Dataset<Row> df = TestData.frame(spark, 20_000, 6);
    PipelineReport report = PipelineReport.create(spark);
    Dataset<Row> out = GpuPartitions.map(df, new AllTypesKernel(), report);
    Dataset<Row> expected = df.selectExpr(AllTypesKernel.SQL);
    assertEquals(TestData.sorted(expected.collectAsList()), TestData.sorted(out.collectAsList()));
    assertEquals(6, report.gpuTasks());
    assertEquals(0, report.cpuTasks());
    assertTrue(report.batches() >= 20_000 / 700, "batches: " + report.batches());
  }

  @Test
  void parquetColumnarInputMatchesSparkSql() throws Exception {
    String dir = Files.createTempDirectory("overlap-gpu").resolve("t").toString();
    TestData.frame(spark, 30_000, 5).write().parquet(dir);
    Dataset<Row> df = spark.read().parquet(dir);
    PipelineReport report = PipelineReport.create(spark);
    Dataset<Row> out = GpuPartitions.map(df, new AllTypesKernel(), report);
    Dataset<Row> expected = df.selectExpr(AllTypesKernel.SQL);
    assertEquals(TestData.sorted(expected.collectAsList()), TestData.sorted(out.collectAsList()));
    assertEquals(0, report.cpuTasks());
    assertEquals(30_000, report.rowsIn());
  }

  /** Declares bigint but returns int: the task fails naming the column; the executor carries on. */
  static final class WrongTypeKernel implements GpuKernel {
    private static final long serialVersionUID = 1L;

    @Override
    public StructType outputSchema(StructType input) {
      return new StructType().add("n", DataTypes.LongType);
    }

    @Override
    public Table apply(Table input) {
      try (ColumnVector n =
          input.getColumn(TestData.col("i32")).castTo(ai.rapids.cudf.DType.INT32)) {
        return new Table(n);
      }
    }
  }

  @Test
  void aKernelReturningTheWrongTypeFailsItsTaskNamingTheColumn() {
    Exception e =
        assertThrows(
            Exception.class,
            () -> GpuPartitions.map(TestData.frame(spark, 1000, 2), new WrongTypeKernel()).count());
    StringBuilder all = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      all.append(t.getMessage()).append(" | ");
    }
    assertTrue(all.toString().contains("'n' is INT32"), all.toString());
    // The pipeline still serves the next job.
    assertEquals(
        1000, GpuPartitions.map(TestData.frame(spark, 1000, 2), new AllTypesKernel()).count());
    assertEquals(NoGpuMode.CPU, ExecutorState.conf().orElseThrow().get(OverlapConf.NO_GPU_MODE));
  }
}
