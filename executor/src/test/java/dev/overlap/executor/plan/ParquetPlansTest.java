package dev.overlap.executor.plan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.overlap.executor.input.parquet.FilePlan;
import dev.overlap.executor.input.parquet.ParquetInput;
import dev.overlap.executor.testing.LocalSession;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Which input plans the GPU Parquet path takes: a plain scan with its columns selected, reordered
 * or renamed; not a filter, a computed column, a partition column or a format that only extends
 * Spark's Parquet format (Delta Lake's reads its files otherwise). And the file splits it reads are
 * the scan's own, every row group once.
 */
class ParquetPlansTest {
  private static SparkSession spark;
  private static String dir;
  private static String partitioned;

  @BeforeAll
  static void start() throws Exception {
    spark =
        LocalSession.start(
            "local[2]",
            "parquet-plans",
            "spark.sql.warehouse.dir",
            Files.createTempDirectory("overlap-plans-warehouse").toString());
    Path root = Files.createTempDirectory("overlap-plans");
    dir = root.resolve("t").toString();
    spark
        .range(0, 200_000)
        .selectExpr("id", "cast(id % 7 as int) as n", "concat('v', id) as s", "id / 3.0 as d")
        .repartition(3)
        .write()
        .option("parquet.block.size", 256 * 1024)
        .parquet(dir);
    partitioned = root.resolve("p").toString();
    spark
        .range(0, 1000)
        .selectExpr("id", "id % 3 as k")
        .write()
        .partitionBy("k")
        .parquet(partitioned);
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  private static ColumnarPlans.Columnar columnar(Dataset<Row> df) {
    SparkPlan plan =
        ((org.apache.spark.sql.classic.Dataset<Row>) df).queryExecution().executedPlan();
    return ColumnarPlans.columnar(plan);
  }

  @Test
  void aScanWithColumnsReorderedAndRenamedIsTaken() {
    Dataset<Row> df = spark.read().parquet(dir).selectExpr("s", "id as x", "d");
    ColumnarPlans.Columnar c = columnar(df);
    assertNotNull(c);
    assertNotNull(c.parquetScan(), c.plan().getClass() + " " + c.plan());
    assertArrayEquals(new String[] {"s", "id", "d"}, c.names());
    assertNotNull(columnar(spark.read().parquet(dir)).parquetScan());
  }

  private static ColumnarPlans.Columnar beforePreparations(Dataset<Row> df) {
    return ColumnarPlans.scanBeforePreparations(
        ((org.apache.spark.sql.classic.Dataset<Row>) df).queryExecution().sparkPlan());
  }

  @Test
  void theScanIsFoundInThePlanBeforeSparksPreparationsAndRuns() {
    Dataset<Row> df = spark.read().parquet(dir).selectExpr("s", "id as x", "d");
    ColumnarPlans.Columnar c = beforePreparations(df);
    assertNotNull(c);
    FileSourceScanExec scan = c.parquetScan();
    assertNotNull(scan, c.plan().getClass() + " " + c.plan());
    assertArrayEquals(new String[] {"s", "id", "d"}, c.names());
    assertArrayEquals(columnar(df).names(), c.names());
    // The unprepared scan runs as it is: every row of the files, in columnar batches.
    long rows = scan.executeColumnar().toJavaRDD().map(b -> (long) b.numRows()).reduce(Long::sum);
    assertEquals(200_000, rows);
    assertNull(beforePreparations(spark.read().parquet(dir).where("id > 5")));
    assertNull(beforePreparations(spark.read().parquet(dir).selectExpr("id + 1 as y")));
    assertNull(
        beforePreparations(spark.read().parquet(partitioned).select("k", "id")).parquetScan());
  }

  @Test
  void aBucketedScanIsNotTakenBeforeSparksPreparations() {
    spark.range(0, 1000).write().format("parquet").bucketBy(4, "id").saveAsTable("bucketed");
    try {
      Dataset<Row> t = spark.table("bucketed");
      assertNull(beforePreparations(t));
      // Prepared, Spark reads it as a plain scan (nothing needs the buckets): that one is taken.
      assertNotNull(columnar(t).parquetScan());
    } finally {
      spark.sql("drop table bucketed");
    }
  }

  @Test
  void aFilterAComputedColumnOrAPartitionColumnIsNot() {
    assertNull(columnar(spark.read().parquet(dir).where("id > 5")));
    assertNull(columnar(spark.read().parquet(dir).selectExpr("id + 1 as y")));
    ColumnarPlans.Columnar p = columnar(spark.read().parquet(partitioned).select("k", "id"));
    assertNotNull(p);
    assertNull(p.parquetScan());
    assertNotNull(columnar(spark.read().parquet(partitioned).select("id")).parquetScan());
  }

  /** A format that reads Parquet files its own way, as Delta Lake's does; here, Spark's way. */
  public static final class ExtendedParquetFormat
      extends org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat {}

  @Test
  void aFormatExtendingSparksParquetIsLeftToSparksReader() {
    Dataset<Row> df = spark.read().format(ExtendedParquetFormat.class.getName()).load(dir);
    ColumnarPlans.Columnar c = columnar(df);
    assertNotNull(c, "Spark's vectorized reader reads it: a columnar input");
    assertNull(c.parquetScan(), "not the GPU's Parquet scan");
    assertEquals(
        false,
        RapidsInput.plainParquet(
            ((org.apache.spark.sql.classic.Dataset<Row>) df).queryExecution().optimizedPlan()));
    assertEquals(200_000L, df.count());
  }

  @Test
  void theSplitsAreTheScansAndReadEveryRowGroupOnce() throws Exception {
    spark.conf().set("spark.sql.files.maxPartitionBytes", 200 * 1024);
    try {
      Dataset<Row> df = spark.read().parquet(dir).selectExpr("d", "id");
      ColumnarPlans.Columnar c = columnar(df);
      FileSourceScanExec scan = c.parquetScan();
      ParquetInput in = ParquetInput.of(scan, c.names(), df.schema(), spark);
      int partitions = scan.inputRDD().getNumPartitions();
      long rows = 0;
      java.util.Set<String> groups = new java.util.HashSet<>();
      for (int p = 0; p < partitions; p++) {
        for (FilePlan f : in.plan(p)) {
          for (int rg : f.rowGroups()) {
            assertEquals(true, groups.add(f.split().path() + "#" + rg), "read twice: " + rg);
            rows += f.rows(rg);
          }
        }
      }
      assertEquals(200_000, rows);
      List<Row> counted = spark.read().parquet(dir).groupBy().count().collectAsList();
      assertEquals(200_000L, counted.get(0).getLong(0));
    } finally {
      spark.conf().unset("spark.sql.files.maxPartitionBytes");
    }
  }
}
