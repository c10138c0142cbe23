package dev.overlap.executor.sql;

import dev.overlap.executor.testing.GpuSession;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The SQL compiler's cases on the GPU: the compiled kernels run in the pipeline over the GPU's
 * Parquet scan, a batch past what the types bound goes to the CPU twin, and nothing stays held.
 */
@Tag("gpu")
class SqlCompilerGpuTest extends SqlCompilerCases {
  @BeforeAll
  static void start() throws Exception {
    startWith(
        GpuSession.start(
            "gpu-sql-compiler",
            "local[4]",
            Map.of(
                "spark.overlap.sql.explain",
                "ALL",
                "spark.sql.extensions",
                "io.delta.sql.DeltaSparkSessionExtension")));
  }

  @AfterEach
  void nothingHeld() {
    GpuSession.assertNothingHeld(spark());
  }

  @AfterAll
  static void stop() {
    GpuSession.stop(spark());
  }
}
