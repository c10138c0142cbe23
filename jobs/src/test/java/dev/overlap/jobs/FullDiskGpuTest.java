package dev.overlap.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.PinnedMemoryPool;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.GpuKernel;
import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.api.Written;
import dev.overlap.jobs.cli.ErrorLines;
import dev.overlap.jobs.cli.JobSummary;
import dev.overlap.jobs.cli.TestErrorLines;
import dev.overlap.jobs.features.TestFeaturesJob;
import java.nio.file.Path;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A disk that fills up under the GPU's Parquet write ({@link FullDiskFileSystem}, slow as well as
 * small): the task's write fails, the job fails with an exception that {@link ErrorLines} turns
 * into the full-disk line, and Spark is stopped at once, as the jobs stop it after a failure, while
 * the failed job's other tasks (killed without an interrupt) are still copying encoded bytes out of
 * pinned buffers. The executor's stop must wait for them before it frees the pinned pool: freed
 * under them, the JVM dies with a SIGSEGV in libc, and this test's JVM with it. Skipped without a
 * GPU.
 */
@Tag("gpu")
class FullDiskGpuTest {
  @TempDir static Path tmp;

  /** Returns its input: the write is what is under test. */
  static final class PassThrough implements GpuKernel {
    private static final long serialVersionUID = 1L;

    @Override
    public StructType outputSchema(StructType input) {
      return input;
    }

    @Override
    public Table apply(Table input) {
      return input;
    }
  }

  /**
   * A session with the plugin on the GPU, where the disk {@code full} holds {@code capacity} bytes
   * (the others any number).
   */
  private static SparkSession session(String full, long capacity) {
    assumeTrue(Cuda.isEnvCompatibleForTesting(), "no GPU");
    SparkSession spark =
        TestSessions.withPlugin(
            "local[4]",
            "spark.hadoop.fs." + FullDiskFileSystem.SCHEME + ".impl",
            FullDiskFileSystem.class.getName(),
            "spark.hadoop." + FullDiskFileSystem.capacityOf(full),
            String.valueOf(capacity),
            // Each write of a MiB takes 100 ms: tasks are still writing when Spark stops.
            "spark.hadoop." + FullDiskFileSystem.WRITE_DELAY,
            "100",
            "spark.overlap.noGpu.mode",
            "FAIL",
            "spark.overlap.staging.bufferSize",
            "4m",
            "spark.overlap.staging.buffers",
            "8",
            // Room in the pinned pool for the encoded files: they come back into pinned buffers.
            "spark.overlap.prefetch.maxBytes",
            "512m");
    assertTrue(GpuStatus.current().gpu(), "no GPU: " + GpuStatus.current().reason());
    return spark;
  }

  /** {@code name} under the test's folder, on the disk named {@code disk}. */
  private static String onDisk(String disk, String name) {
    return FullDiskFileSystem.SCHEME + "://" + disk + tmp.resolve(name);
  }

  private static void assertFullDiskLine(Throwable e, String job, String output) {
    boolean found = false;
    for (Throwable c = e; c != null; c = c.getCause()) {
      found |= c.getMessage() != null && c.getMessage().contains(FullDiskFileSystem.NO_SPACE);
    }
    assertTrue(found, "no '" + FullDiskFileSystem.NO_SPACE + "' in the failure's causes: " + e);
    ErrorLines.Line l = TestErrorLines.of(e, job, output, "local[4]");
    assertTrue(
        l.text()
            .startsWith(
                job
                    + " ran out of disk space (No space left on device) writing --output '"
                    + output
                    + "'"),
        l.text());
    assertEquals(1, l.exit());
  }

  @Test
  void theGpuParquetWriteOnAFullDiskFailsInOneLineAndSparkStopsCleanly() {
    // Made by this session's executor, and so shut down by its stop, unless a task still runs.
    boolean ownPinnedPool = !PinnedMemoryPool.isInitialized();
    SparkSession spark = session("full", 8L << 20);
    try {
      Dataset<Row> df =
          spark
              .range(0, 2_000_000, 1, 8)
              .selectExpr("id", "rand(1) as a", "rand(2) as b", "rand(3) as c");
      // With room: every task encodes on the GPU, and the output is larger than the full disk.
      Written roomy =
          GpuPartitions.write(df, new PassThrough(), ParquetOutput.to(onDisk("roomy", "roomy")));
      assertEquals(8, roomy.gpuTasks());
      assertTrue(roomy.bytes() > 4 * (8L << 20), "output of " + roomy.bytes() + " bytes");
      String out = onDisk("full", "out");
      Throwable e =
          assertThrows(
              Exception.class,
              () -> GpuPartitions.write(df, new PassThrough(), ParquetOutput.to(out)));
      assertFullDiskLine(e, "features", out);
    } finally {
      // As the jobs stop Spark after a failure: at once.
      spark.stop();
    }
    if (ownPinnedPool) {
      assertFalse(
          PinnedMemoryPool.isInitialized(),
          "the executor left its pinned pool allocated: a task ran on 30 s after its job failed");
    }
  }

  @Test
  void theFeaturesJobOnTheGpuOnAFullDiskFailsInOneLine() {
    SparkSession spark = session("features", 64L << 10);
    try {
      Path in = tmp.resolve("lineitem");
      TestTables.lineitem(spark, in);
      String out = onDisk("features", "features");
      Throwable e =
          assertThrows(
              Exception.class,
              () -> TestFeaturesJob.run(spark, in.toString(), out, 20, new JobSummary("features")));
      assertFullDiskLine(e, "features", out);
    } finally {
      spark.stop();
    }
  }
}
