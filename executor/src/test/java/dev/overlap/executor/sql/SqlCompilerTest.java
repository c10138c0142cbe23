package dev.overlap.executor.sql;

import dev.overlap.executor.testing.LocalSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The SQL compiler's cases without a GPU: the parts it takes run through the compiled kernels' CPU
 * implementation ({@code spark.overlap.sql.withoutGpu}), which evaluates Spark's own expressions.
 */
class SqlCompilerTest extends SqlCompilerCases {
  @BeforeAll
  static void start() throws Exception {
    startWith(
        LocalSession.start(
            "local[2]",
            "sql-compiler",
            "spark.plugins",
            "dev.overlap.executor.OverlapPlugin",
            "spark.overlap.sql.withoutGpu",
            "true",
            "spark.overlap.sql.explain",
            "ALL",
            "spark.sql.shuffle.partitions",
            "4"));
  }

  @AfterAll
  static void stop() {
    spark().stop();
  }
}
