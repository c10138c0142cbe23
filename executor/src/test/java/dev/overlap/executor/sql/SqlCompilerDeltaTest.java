package dev.overlap.executor.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.testing.LocalSession;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The SQL compiler over Delta tables read with {@code spark.read.format("delta")}: a plain table's
 * aggregate is taken and equals Spark's; one with column mapping is left to Delta's reader, with
 * the reason.
 */
class SqlCompilerDeltaTest {
  private static SparkSession spark;
  private static Path dir;

  @BeforeAll
  static void start() throws Exception {
    spark =
        LocalSession.start(
            "local[2]",
            "sql-compiler-delta",
            "spark.plugins",
            "dev.overlap.executor.OverlapPlugin",
            "spark.overlap.sql.withoutGpu",
            "true",
            "spark.sql.extensions",
            "io.delta.sql.DeltaSparkSessionExtension",
            "spark.sql.catalog.spark_catalog",
            "org.apache.spark.sql.delta.catalog.DeltaCatalog",
            "spark.sql.shuffle.partitions",
            "4",
            "spark.databricks.delta.snapshotPartitions",
            "2");
    dir = Files.createTempDirectory("sql-compiler-delta");
    Dataset<Row> rows =
        spark.sql(
            "SELECT CAST(id % 7 AS STRING) AS k, CAST(id * 1.5 AS DECIMAL(12,2)) AS v,"
                + " IF(id % 5 = 0, NULL, id) AS n FROM range(0, 5000, 1, 3)");
    rows.write().format("delta").save(dir.resolve("plain").toString());
    rows.write()
        .format("delta")
        .option("delta.columnMapping.mode", "name")
        .option("delta.minReaderVersion", "2")
        .option("delta.minWriterVersion", "5")
        .save(dir.resolve("mapped").toString());
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  private static final String QUERY =
      "SELECT k, sum(v), count(n), max(n) FROM %s WHERE v > 10 GROUP BY k";

  private static List<String> rows(String table, boolean compiler, boolean[] staged) {
    spark.conf().set("spark.overlap.sql.enabled", String.valueOf(compiler));
    try {
      spark
          .read()
          .format("delta")
          .load(dir.resolve(table).toString())
          .createOrReplaceTempView(table);
      Dataset<Row> df = spark.sql(String.format(QUERY, table));
      List<String> out = df.collectAsList().stream().map(Row::toString).sorted().toList();
      staged[0] = df.queryExecution().executedPlan().toString().contains("OverlapStage");
      return out;
    } finally {
      spark.conf().unset("spark.overlap.sql.enabled");
    }
  }

  @Test
  void aPlainTablesAggregateIsTakenAndEqualsSpark() {
    boolean[] staged = {false};
    List<String> want = rows("plain", false, staged);
    List<String> got = rows("plain", true, staged);
    assertTrue(staged[0], "a plain Delta table's aggregate was not taken");
    assertEquals(want, got);
  }

  @Test
  void aTableWithColumnMappingIsLeftToDeltasReader() {
    boolean[] staged = {false};
    List<String> want = rows("mapped", false, staged);
    List<String> got = rows("mapped", true, staged);
    assertFalse(staged[0], "a table with column mapping was taken");
    assertEquals(want, got);
  }
}
