package dev.overlap.executor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.testing.GpuSession;
import dev.overlap.executor.testing.PassThroughKernel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A real fatal CUDA error (an illegal memory access, provoked once a named file is decoded) in
 * local mode: the job ends with Spark's answer, the faulting task's partition read again on the
 * CPU, the file named in the report, the GPU fenced; a later job over the same files gives Spark's
 * answer too. The fault leaves the process's CUDA context unusable, so this class runs in a JVM of
 * its own ({@code tools/gpu-suite.sh class:dev.overlap.executor.api.FaultedFileGpuTest}), never
 * with the other GPU tests: its tag is not {@code gpu}.
 */
@Tag("gpu-fault")
class FaultedFileGpuTest {
  private static SparkSession spark;
  private static Path root;

  @BeforeAll
  static void start() throws Exception {
    root = Files.createTempDirectory("overlap-faulted-gpu");
    spark = GpuSession.start("gpu-faulted", "local[2]", Map.of());
  }

  @AfterAll
  static void stop() {
    System.clearProperty("overlap.test.faultOnDecodeOf");
    spark.stop();
  }

  @Test
  void aFileWhoseDecodeFaultsTheGpuEndsWithSparksAnswer() throws Exception {
    String dir = root.resolve("t").toString();
    spark
        .range(0, 400_000)
        .selectExpr("id", "cast(id % 97 as string) as s", "id * 0.5 as d")
        .repartition(8)
        .write()
        .parquet(dir);
    String victim;
    try (Stream<Path> files = Files.list(Path.of(dir))) {
      victim =
          files
              .map(p -> p.getFileName().toString())
              .filter(n -> n.endsWith(".parquet"))
              .sorted()
              .skip(3)
              .findFirst()
              .orElseThrow();
    }
    System.setProperty("overlap.test.faultOnDecodeOf", victim);
    Dataset<Row> in = spark.read().parquet(dir);
    List<Row> want = in.orderBy("id").collectAsList();
    assertTrue(GpuStatus.current().gpu(), "a GPU before the fault");

    PipelineReport r = PipelineReport.create(spark);
    List<Row> got = GpuPartitions.map(in, new PassThroughKernel(), r).orderBy("id").collectAsList();
    System.out.println("faulted: " + r.gpuFaults() + "; " + GpuStatus.current());
    assertEquals(want, got);
    // The fault named once, not among the host's decodes; the task that met it counted once, as
    // the CPU task it ended as.
    assertEquals(1, r.gpuFaults().size(), r.gpuFaults().toString());
    assertTrue(
        r.gpuFaults().get(0).startsWith(victim + ": the GPU failed fatally while decoding it"),
        r.gpuFaults().toString());
    assertTrue(
        r.parquetFallbacks().stream().noneMatch(f -> f.contains(victim)),
        r.parquetFallbacks().toString());
    assertTrue(r.fellBackTasks() >= 1, "no task fell back");
    assertTrue(r.cpuTasks() >= r.fellBackTasks(), "a fallen-back task is a CPU task");
    assertTrue(r.stageSummary(1, 2).contains("GPU fault       " + victim), r.stageSummary(1, 2));
    assertFalse(GpuStatus.current().gpu(), "the GPU is fenced");

    // The next job: every task on the CPU (local mode does not exit), Spark's answer.
    List<Row> again =
        GpuPartitions.map(in, new PassThroughKernel(), PipelineReport.create(spark))
            .orderBy("id")
            .collectAsList();
    assertEquals(want, again);
  }
}
