package dev.overlap.executor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.testing.AllTypesKernel;
import dev.overlap.executor.testing.GpuSession;
import dev.overlap.executor.testing.TestData;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Parquet input path on a real GPU: the compressed column chunks are copied and decoded by the
 * GPU, and the kernel sees exactly what Spark's own reader gives. Files with every supported type
 * and nulls, each codec, many row groups, columns in another order than the kernel's, splits in the
 * middle of files, many small files, an empty file, a file lacking a column; and files the GPU must
 * leave to the host. Nothing leaks.
 */
@Tag("gpu")
class ParquetScanGpuTest {
  private static SparkSession spark;
  private static Path root;

  @BeforeAll
  static void start() throws Exception {
    root = Files.createTempDirectory("overlap-scan");
    spark =
        GpuSession.start("gpu-scan", "local[4]", Map.of("spark.overlap.prefetch.maxBytes", "8m"));
  }

  @AfterEach
  void nothingHeld() {
    GpuSession.assertNothingHeld(spark);
  }

  @AfterAll
  static void stop() {
    GpuSession.stop(spark);
  }

  /** The kernel's columns, in TestData's order, from a scan whose files have them reversed. */
  private static Dataset<Row> kernelInput(Dataset<Row> scan) {
    List<Column> cols = new ArrayList<>();
    for (String n : TestData.SCHEMA.fieldNames()) {
      cols.add(functions.col(n));
    }
    return scan.select(cols.toArray(new Column[0]));
  }

  private static Dataset<Row> reversed(Dataset<Row> df) {
    String[] names = TestData.SCHEMA.fieldNames();
    Column[] cols = new Column[names.length];
    for (int i = 0; i < names.length; i++) {
      cols[i] = functions.col(names[names.length - 1 - i]);
    }
    return df.select(cols);
  }

  private static PipelineReport checkAgainstSpark(Dataset<Row> in) {
    PipelineReport report = PipelineReport.create(spark);
    Dataset<Row> out = GpuPartitions.map(in, new AllTypesKernel(), report);
    List<String> got = TestData.sorted(out.collectAsList());
    // Spark's own reader and Spark SQL on the CPU.
    assertEquals(TestData.sorted(in.selectExpr(AllTypesKernel.SQL).collectAsList()), got);
    return report;
  }

  @ParameterizedTest
  @ValueSource(strings = {"none", "snappy", "gzip", "zstd", "lz4_raw"})
  void everyTypeWithNullsInEachCodecDecodesAsSparkReadsIt(String codec) {
    String dir = root.resolve("codec-" + codec).toString();
    reversed(TestData.frame(spark, 40_000, 3))
        .write()
        .option("compression", codec)
        .option("parquet.block.size", 64 * 1024)
        .parquet(dir);
    spark.conf().set("spark.sql.files.maxPartitionBytes", 150 * 1024);
    try {
      PipelineReport r = checkAgainstSpark(kernelInput(spark.read().parquet(dir)));
      assertEquals(List.of(), r.parquetFallbacks());
      assertTrue(r.gpuTasks(InputPath.PARQUET) > 3, "tasks: " + r.gpuTasks(InputPath.PARQUET));
      assertEquals(r.gpuTasks(), r.gpuTasks(InputPath.PARQUET));
      assertEquals(40_000, r.rowsIn());
      assertTrue(r.parquetRowGroups() > r.parquetFiles(), "row groups: " + r.parquetRowGroups());
      assertTrue(r.decodeNanos() > 0);
      assertEquals(r.parquetCompressedBytes(), r.bytesCopied());
    } finally {
      spark.conf().unset("spark.sql.files.maxPartitionBytes");
    }
  }

  @Test
  void manySmallFilesAnEmptyFileAndAFileLackingAColumn() {
    String dir = root.resolve("small").toString();
    TestData.frame(spark, 3_000, 40).write().parquet(dir);
    spark.createDataFrame(List.of(), TestData.SCHEMA).write().mode("append").parquet(dir);
    spark
        .createDataFrame(TestData.rows(3_000, 3_500), TestData.SCHEMA)
        .drop("s", "dec18")
        .coalesce(1)
        .write()
        .mode("append")
        .parquet(dir);
    Dataset<Row> scan = spark.read().schema(TestData.SCHEMA).parquet(dir);
    PipelineReport r = checkAgainstSpark(scan);
    assertEquals(List.of(), r.parquetFallbacks());
    assertEquals(r.gpuTasks(), r.gpuTasks(InputPath.PARQUET));
    assertEquals(3_500, r.rowsIn());
    assertEquals(
        500, scan.where("s is null and dec18 is null and id >= 3000").count(), "Spark's nulls");
  }

  @Test
  void filesInTheLegacyCalendarGoToTheHostWithTheReasonAndGpuModeRefusesThem() {
    String dir = root.resolve("legacy").toString();
    spark.conf().set("spark.sql.parquet.datetimeRebaseModeInWrite", "LEGACY");
    spark.conf().set("spark.sql.parquet.int96RebaseModeInWrite", "LEGACY");
    try {
      TestData.frame(spark, 5_000, 2).write().parquet(dir);
    } finally {
      spark.conf().unset("spark.sql.parquet.datetimeRebaseModeInWrite");
      spark.conf().unset("spark.sql.parquet.int96RebaseModeInWrite");
    }
    PipelineReport r = checkAgainstSpark(spark.read().parquet(dir));
    assertEquals(0, r.gpuTasks(InputPath.PARQUET));
    assertEquals(r.gpuTasks(), r.gpuTasks(InputPath.COLUMNAR));
    assertTrue(!r.parquetFallbacks().isEmpty());
    for (String why : r.parquetFallbacks()) {
      assertTrue(why.contains("in the legacy calendar"), why);
    }

    spark.conf().set("spark.overlap.parquet.decode", "GPU");
    try {
      Exception e =
          assertThrows(
              Exception.class,
              () -> GpuPartitions.map(spark.read().parquet(dir), new AllTypesKernel()).count());
      StringBuilder all = new StringBuilder();
      for (Throwable t = e; t != null; t = t.getCause()) {
        all.append(t.getMessage()).append(" | ");
      }
      assertTrue(all.toString().contains("in the legacy calendar"), all.toString());
      assertTrue(all.toString().contains("spark.overlap.parquet.decode=GPU"), all.toString());
    } finally {
      spark.conf().unset("spark.overlap.parquet.decode");
    }
  }

  @Test
  void timestampsAsInt96AndAsMicrosDecodeAlike() {
    for (String type : new String[] {"INT96", "TIMESTAMP_MICROS", "TIMESTAMP_MILLIS"}) {
      String dir = root.resolve("ts-" + type).toString();
      spark.conf().set("spark.sql.parquet.outputTimestampType", type);
      try {
        TestData.frame(spark, 8_000, 2).write().parquet(dir);
      } finally {
        spark.conf().unset("spark.sql.parquet.outputTimestampType");
      }
      PipelineReport r = checkAgainstSpark(spark.read().parquet(dir));
      assertEquals(List.of(), r.parquetFallbacks(), type);
      assertEquals(r.gpuTasks(), r.gpuTasks(InputPath.PARQUET), type);
    }
  }

  @Test
  void hostModeDecodesOnTheHost() {
    String dir = root.resolve("host").toString();
    TestData.frame(spark, 5_000, 2).write().parquet(dir);
    spark.conf().set("spark.overlap.parquet.decode", "HOST");
    try {
      PipelineReport r = checkAgainstSpark(spark.read().parquet(dir));
      assertEquals(r.gpuTasks(), r.gpuTasks(InputPath.COLUMNAR));
      assertEquals(0, r.parquetFiles());
    } finally {
      spark.conf().unset("spark.overlap.parquet.decode");
    }
  }
}
