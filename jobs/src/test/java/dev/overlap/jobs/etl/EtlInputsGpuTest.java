package dev.overlap.jobs.etl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.Rmm;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.jobs.TestSessions;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link EtlInputsTest}'s comparisons with Spark SQL on the GPU path: Q1Kernel and Q6Kernel's cuDF
 * code over every kind of input. It fails, never skips, where the executor does not run on a GPU.
 * Batches of at most 700 rows make many batches per partition, and the large-value cases make the
 * kernels sum in several slices and compute in DECIMAL128.
 */
@Tag("gpu")
public class EtlInputsGpuTest {
  @TempDir static Path tmp;
  static SparkSession spark;

  @BeforeAll
  static void start() {
    spark =
        TestSessions.withPlugin(
            "local[4]",
            "spark.sql.shuffle.partitions",
            "4",
            "spark.overlap.batch.maxRows",
            "700",
            "spark.overlap.noGpu.mode",
            "FAIL");
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

  @Test
  void theExecutorRunsOnTheGpu() {
    assertTrue(GpuStatus.current().gpu(), GpuStatus.current().reason());
  }

  static Stream<EtlInputs.Kinds> cases() {
    return EtlInputs.cases().stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void sameAsSparkSqlOnTheGpu(EtlInputs.Kinds k) {
    assertTrue(GpuStatus.current().gpu(), "no GPU: " + GpuStatus.current().reason());
    Dataset<Row> lineitem = EtlInputs.write(spark, tmp, k, 5000, k.name().hashCode());
    PipelineReport[] r = EtlInputs.check(spark, lineitem, k.name());
    for (PipelineReport p : r) {
      assertTrue(p.gpuTasks() > 0, "the GPU path ran");
      assertEquals(0, p.cpuTasks(), "no task ran on the CPU path");
    }
  }
}
