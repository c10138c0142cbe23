package dev.overlap.executor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.Table;
import dev.overlap.executor.testing.AllTypesKernel;
import dev.overlap.executor.testing.GpuSession;
import dev.overlap.executor.testing.TestData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.spark.TaskKilled;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerTaskStart;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * GpuPartitions.write on a real GPU: every supported type with nulls, encoded by cuDF on the
 * device, read back by Spark's own CPU reader as exactly the kernel's declared output (names,
 * types, values); from packed rows and from the GPU's Parquet scan; files split by rows; a task
 * killed while writing leaves no file behind; nothing is left allocated.
 */
@Tag("gpu")
class GpuWriteGpuTest {
  private static SparkSession spark;
  private static Path root;

  @BeforeAll
  static void start() throws IOException {
    root = Files.createTempDirectory("overlap-write");
    spark =
        GpuSession.start(
            "gpu-write",
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

  private static List<Path> parts(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().startsWith("part-")).sorted().toList();
    }
  }

  /** The declared schema, as Spark reads file sources: every column nullable. */
  private static StructType nullable(StructType s) {
    StructType out = new StructType();
    for (StructField f : s.fields()) {
      out = out.add(f.name(), f.dataType(), true);
    }
    return out;
  }

  private static void assertWritten(Path dir, Written w, String extension, long rows)
      throws IOException {
    List<Path> parts = parts(dir);
    assertTrue(Files.exists(dir.resolve("_SUCCESS")), "no _SUCCESS in " + dir);
    assertEquals(parts.size(), w.files(), "files: " + parts);
    long bytes = 0;
    for (Path p : parts) {
      assertTrue(p.toString().endsWith(extension), p.toString());
      bytes += Files.size(p);
    }
    assertEquals(bytes, w.bytes(), "bytes on disk");
    assertEquals(rows, w.rows());
    try (Stream<Path> s = Files.list(dir)) {
      assertTrue(s.noneMatch(p -> p.getFileName().toString().startsWith("_temporary")));
    }
  }

  @Test
  void everyTypeWithNullsReadsBackAsTheKernelsOutput() throws IOException {
    Dataset<Row> df = TestData.frame(spark, 20_000, 6);
    StructType declared = new AllTypesKernel().outputSchema(df.schema());
    List<String> expected = TestData.sorted(df.selectExpr(AllTypesKernel.SQL).collectAsList());
    for (String codec : List.of("snappy", "zstd", "none")) {
      Path dir = root.resolve("all-" + codec);
      PipelineReport report = PipelineReport.create(spark);
      ParquetOutput out = ParquetOutput.to(dir.toString()).withCompression(codec);
      Written w = GpuPartitions.write(df, new AllTypesKernel(), out, report);
      assertEquals(6, w.gpuTasks(), codec);
      assertEquals(6, report.gpuTasks(), codec);
      assertWritten(dir, w, out.extension(), 20_000);
      Dataset<Row> back = spark.read().parquet(dir.toString());
      assertEquals(nullable(declared), back.schema(), codec);
      assertEquals(expected, TestData.sorted(back.collectAsList()), codec);
    }
  }

  @Test
  void parquetDecodedAndEncodedOnTheGpuReadsBackAsTheKernelsOutput() throws IOException {
    Path in = root.resolve("in");
    TestData.frame(spark, 30_000, 5).write().parquet(in.toString());
    Dataset<Row> df = spark.read().parquet(in.toString());
    Path dir = root.resolve("from-parquet");
    PipelineReport report = PipelineReport.create(spark);
    Written w =
        GpuPartitions.write(df, new AllTypesKernel(), ParquetOutput.to(dir.toString()), report);
    assertEquals(report.gpuTasks(), report.gpuTasks(InputPath.PARQUET));
    assertTrue(report.gpuTasks() > 0);
    assertWritten(dir, w, ".snappy.parquet", 30_000);
    Dataset<Row> back = spark.read().parquet(dir.toString());
    assertEquals(
        TestData.sorted(df.selectExpr(AllTypesKernel.SQL).collectAsList()),
        TestData.sorted(back.collectAsList()));
  }

  @Test
  void anOutputOfNoRowsOnTheGpuReadsBackWithItsSchema() throws IOException {
    Path in = root.resolve("no-rows-in");
    TestData.frame(spark, 20_000, 4).write().parquet(in.toString());
    Dataset<Row> df = spark.read().parquet(in.toString()).where("id < 0");
    assertTrue(
        df.javaRDD().getNumPartitions() > 1, "the case under test: several tasks, every one empty");
    StructType declared = new AllTypesKernel().outputSchema(df.schema());
    Path dir = root.resolve("no-rows");
    Written w = GpuPartitions.write(df, new AllTypesKernel(), ParquetOutput.to(dir.toString()));
    assertEquals(df.javaRDD().getNumPartitions(), w.gpuTasks());
    assertWritten(dir, w, ".snappy.parquet", 0);
    assertEquals(1, w.files(), "the first task's file of no rows");
    Dataset<Row> back = spark.read().parquet(dir.toString());
    assertEquals(nullable(declared), back.schema());
    assertEquals(0, back.count());
  }

  /**
   * The first task's file of no rows comes from Spark's writer, the others' files from the GPU: the
   * folder reads back as one table.
   */
  @Test
  void anEmptyFirstTaskBesideGpuEncodedFilesReadsBackAsTheKernelsOutput() throws IOException {
    Dataset<Row> df = TestData.frameWithFirstPartitionEmpty(spark, 20_000, 4);
    List<String> expected = TestData.sorted(df.selectExpr(AllTypesKernel.SQL).collectAsList());
    assertTrue(expected.size() > 0 && expected.size() < 20_000, "rows: " + expected.size());
    StructType declared = new AllTypesKernel().outputSchema(df.schema());
    for (String codec : List.of("snappy", "zstd")) {
      Path dir = root.resolve("first-empty-" + codec);
      ParquetOutput out = ParquetOutput.to(dir.toString()).withCompression(codec);
      Written w = GpuPartitions.write(df, new AllTypesKernel(), out);
      assertEquals(4, w.gpuTasks(), codec);
      assertWritten(dir, w, out.extension(), expected.size());
      assertTrue(
          parts(dir).stream().anyMatch(p -> p.getFileName().toString().startsWith("part-00000-")),
          codec + ": the first task's file");
      Dataset<Row> back = spark.read().parquet(dir.toString());
      assertEquals(nullable(declared), back.schema(), codec);
      assertEquals(expected, TestData.sorted(back.collectAsList()), codec);
    }
  }

  @Test
  void aTasksOutputIsSplitIntoFilesByRows() throws IOException {
    Dataset<Row> df = TestData.frame(spark, 20_000, 1);
    Path dir = root.resolve("by-rows");
    Written w =
        GpuPartitions.write(
            df, new AllTypesKernel(), ParquetOutput.to(dir.toString()).withRowsPerFile(5000));
    assertWritten(dir, w, ".snappy.parquet", 20_000);
    List<Path> parts = parts(dir);
    // Batches of 700 rows: a file ends at the first batch end at or past 5000 rows.
    long total = 0;
    for (int i = 0; i < parts.size(); i++) {
      long n = spark.read().parquet(parts.get(i).toString()).count();
      total += n;
      if (i < parts.size() - 1) {
        assertTrue(n >= 5000 && n < 5700, parts.get(i) + ": " + n + " rows");
      }
    }
    assertEquals(20_000, total);
    assertEquals(4, parts.size(), parts.toString());
  }

  /** Returns its input, slowly while {@link #SLOW} holds. */
  static final class SlowKernel implements GpuKernel {
    private static final long serialVersionUID = 1L;
    static volatile boolean slow = true;

    @Override
    public StructType outputSchema(StructType input) {
      return input;
    }

    @Override
    public Table apply(Table input) {
      if (slow) {
        try {
          Thread.sleep(200);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      ColumnVector[] cols = new ColumnVector[input.getNumberOfColumns()];
      for (int i = 0; i < cols.length; i++) {
        cols[i] = input.getColumn(i);
      }
      return new Table(cols);
    }
  }

  static final Set<Long> KILLED = ConcurrentHashMap.newKeySet();

  @Test
  void aTaskKilledWhileWritingLeavesNoFile() throws Exception {
    Dataset<Row> df = TestData.frame(spark, 20_000, 4);
    Path dir = root.resolve("killed");
    ScheduledExecutorService killer = Executors.newSingleThreadScheduledExecutor();
    SparkListener listener =
        new SparkListener() {
          @Override
          public void onTaskStart(SparkListenerTaskStart start) {
            if (start.taskInfo().index() == 1 && start.taskInfo().attemptNumber() == 0) {
              long id = start.taskInfo().taskId();
              killer.schedule(
                  () -> {
                    spark.sparkContext().killTaskAttempt(id, true, "test: killed while writing");
                  },
                  500,
                  TimeUnit.MILLISECONDS);
            }
          }

          @Override
          public void onTaskEnd(SparkListenerTaskEnd end) {
            if (end.reason() instanceof TaskKilled) {
              KILLED.add(end.taskInfo().taskId());
              SlowKernel.slow = false;
            }
          }
        };
    spark.sparkContext().addSparkListener(listener);
    Written w;
    try {
      SlowKernel.slow = true;
      w = GpuPartitions.write(df, new SlowKernel(), ParquetOutput.to(dir.toString()));
      spark.sparkContext().listenerBus().waitUntilEmpty();
    } finally {
      spark.sparkContext().removeSparkListener(listener);
      killer.shutdownNow();
      SlowKernel.slow = false;
    }
    assertEquals(1, KILLED.size(), "killed attempts");
    // One file per task: the killed attempt's file is gone, its retry's is there.
    assertWritten(dir, w, ".snappy.parquet", 20_000);
    assertEquals(4, parts(dir).size());
    Dataset<Row> back = spark.read().parquet(dir.toString());
    assertEquals(TestData.sorted(df.collectAsList()), TestData.sorted(back.collectAsList()));
  }
}
