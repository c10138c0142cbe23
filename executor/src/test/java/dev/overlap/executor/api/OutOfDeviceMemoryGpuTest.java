package dev.overlap.executor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.Table;
import dev.overlap.executor.testing.GpuSession;
import dev.overlap.executor.testing.TestData;
import java.nio.file.Files;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Real device allocation failures on a GPU: a kernel that asks for the whole device when its batch
 * has more than a given number of rows. The pipeline retries it, splits the batch (on the device
 * for packed rows, by row group for Parquet) and hands back every row; a batch that cannot be split
 * small enough fails its task with the one line; no device memory is left allocated.
 */
@Tag("gpu")
class OutOfDeviceMemoryGpuTest {
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = GpuSession.start("gpu-oom", "local[2]", Map.of("spark.overlap.batch.maxRows", "700"));
  }

  @AfterEach
  void nothingHeld() {
    GpuSession.assertNothingHeld(spark);
  }

  @AfterAll
  static void stop() {
    GpuSession.stop(spark);
  }

  /** Returns its input; first asks for more memory than the device has when given many rows. */
  static final class GreedyKernel implements GpuKernel {
    private static final long serialVersionUID = 1L;
    private final long fitsRows;

    GreedyKernel(long fitsRows) {
      this.fitsRows = fitsRows;
    }

    @Override
    public String name() {
      return "greedy";
    }

    @Override
    public StructType outputSchema(StructType input) {
      return input;
    }

    @Override
    public Table apply(Table input) {
      if (input.getRowCount() > fitsRows) {
        long all = Cuda.memGetInfo().total;
        DeviceMemoryBuffer.allocate(all).close(); // never returns: more than the device holds
      }
      ColumnVector[] cols = new ColumnVector[input.getNumberOfColumns()];
      for (int i = 0; i < cols.length; i++) {
        cols[i] = input.getColumn(i).incRefCount();
      }
      try {
        return new Table(cols);
      } finally {
        for (ColumnVector c : cols) {
          c.close();
        }
      }
    }
  }

  @Test
  void rowsThatFitOnlyInQuartersComeBackWhole() {
    Dataset<Row> df = TestData.frame(spark, 10_000, 4);
    // 700-row batches split on the device into 350, then 175 rows, which fit.
    Dataset<Row> out = GpuPartitions.map(df, new GreedyKernel(300));
    assertEquals(TestData.sorted(df.collectAsList()), TestData.sorted(out.collectAsList()));
  }

  @Test
  void parquetBatchesSplitByRowGroupComeBackWhole() throws Exception {
    String dir = Files.createTempDirectory("overlap-oom").resolve("t").toString();
    // Row groups of about 100 rows (parquet-mr checks the size every 100 rows at first).
    TestData.frame(spark, 10_000, 2).write().option("parquet.block.size", 1024).parquet(dir);
    Dataset<Row> df = spark.read().parquet(dir);
    PipelineReport report = PipelineReport.create(spark);
    Dataset<Row> out = GpuPartitions.map(df, new GreedyKernel(300), report);
    assertEquals(TestData.sorted(df.collectAsList()), TestData.sorted(out.collectAsList()));
    assertEquals(report.gpuTasks(), report.gpuTasks(InputPath.PARQUET));
    assertTrue(report.parquetRowGroups() > 20, "row groups: " + report.parquetRowGroups());
  }

  @Test
  void aBatchThatNeverFitsFailsItsTaskWithOneLine() {
    Exception e =
        assertThrows(
            Exception.class,
            () -> GpuPartitions.map(TestData.frame(spark, 100, 1), new GreedyKernel(0)).count());
    StringBuilder all = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      all.append(t.getMessage()).append(" | ");
    }
    String m = all.toString();
    assertTrue(m.contains("out of device memory: kernel greedy asked for "), m);
    assertTrue(m.contains("which cannot be split further; device budget "), m);
    assertTrue(m.contains("; device free "), m);
    // cuDF's OutOfMemoryError is no cause of the task's failure: Spark's executor (here, the test's
    // JVM) would have exited on it. The pipeline serves the next job.
    assertEquals(
        100, GpuPartitions.map(TestData.frame(spark, 100, 1), new GreedyKernel(50)).count());
  }
}
