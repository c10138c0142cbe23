package dev.overlap.executor.output.parquet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import ai.rapids.cudf.Table;
import dev.overlap.executor.api.CpuKernel;
import dev.overlap.executor.api.GpuKernel;
import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.api.Written;
import dev.overlap.executor.testing.AllTypesKernel;
import dev.overlap.executor.testing.LocalSession;
import dev.overlap.executor.testing.TestData;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerTaskStart;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * GpuPartitions.write in a real local Spark session with the plugin and no GPU: the kernel's CPU
 * implementation and Spark's Parquet writer write the files, through Spark's commit protocol. Two
 * attempts per task ({@code local[2,2]}), so that a task failing once is retried.
 */
class ParquetWriteTest {
  private static final Pattern PART =
      Pattern.compile("part-(\\d{5})-[0-9a-f-]{36}-c(\\d{3})(\\..+)");

  private static SparkSession spark;

  // What the tasks of this JVM (local mode) did, and what the driver saw of them.
  private static final AtomicLong ROWS_SEEN = new AtomicLong();
  private static final AtomicInteger PLANNED_FAILURES = new AtomicInteger();
  private static final AtomicInteger TASKS_STARTED = new AtomicInteger();
  private static final AtomicInteger TASKS_ENDED = new AtomicInteger();

  @TempDir Path tmp;

  @BeforeAll
  static void start() {
    assumeFalse(gpuVisible(), "these tests check the no-GPU path");
    spark =
        LocalSession.start(
            "local[2,2]",
            "parquet-write",
            "spark.plugins",
            "dev.overlap.executor.OverlapPlugin",
            "spark.overlap.noGpu.mode",
            "CPU",
            "spark.sql.shuffle.partitions",
            "4");
    spark
        .sparkContext()
        .addSparkListener(
            new SparkListener() {
              @Override
              public void onTaskStart(SparkListenerTaskStart e) {
                TASKS_STARTED.incrementAndGet();
              }

              @Override
              public void onTaskEnd(SparkListenerTaskEnd e) {
                TASKS_ENDED.incrementAndGet();
              }
            });
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
      spark = null;
    }
  }

  @BeforeEach
  void reset() throws Exception {
    quiet();
    ROWS_SEEN.set(0);
    PLANNED_FAILURES.set(0);
    TASKS_STARTED.set(0);
    TASKS_ENDED.set(0);
  }

  private static boolean gpuVisible() {
    try {
      return ai.rapids.cudf.Cuda.getDeviceCount() > 0;
    } catch (Throwable t) {
      return false;
    }
  }

  /** Waits until every task started has ended and the listeners have seen it. */
  private static void quiet() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      spark.sparkContext().listenerBus().waitUntilEmpty();
      if (spark.sparkContext().statusTracker().getActiveStageIds().length == 0
          && TASKS_STARTED.get() == TASKS_ENDED.get()) {
        return;
      }
      assertTrue(System.nanoTime() < deadline, "tasks still running");
      Thread.sleep(50);
    }
  }

  // ---- kernels ----

  /** AllTypesKernel, counting the rows its CPU implementation takes. */
  static final class CountingKernel implements GpuKernel {
    private static final long serialVersionUID = 1L;
    private final AllTypesKernel inner = new AllTypesKernel();

    @Override
    public StructType outputSchema(StructType input) {
      return inner.outputSchema(input);
    }

    @Override
    public Table apply(Table input) {
      return inner.apply(input);
    }

    @Override
    public CpuKernel cpu() {
      CpuKernel cpu = inner.cpu();
      return rows ->
          cpu.apply(
              new Iterator<>() {
                @Override
                public boolean hasNext() {
                  return rows.hasNext();
                }

                @Override
                public Row next() {
                  ROWS_SEEN.incrementAndGet();
                  return rows.next();
                }
              });
    }
  }

  /**
   * AllTypesKernel whose CPU implementation fails in one partition after 20 rows (or at its end),
   * on its first attempt or on every attempt.
   */
  static final class FailingKernel implements GpuKernel {
    private static final long serialVersionUID = 1L;
    private final AllTypesKernel inner = new AllTypesKernel();
    private final int partition;
    private final boolean everyAttempt;

    FailingKernel(int partition, boolean everyAttempt) {
      this.partition = partition;
      this.everyAttempt = everyAttempt;
    }

    @Override
    public StructType outputSchema(StructType input) {
      return inner.outputSchema(input);
    }

    @Override
    public Table apply(Table input) {
      return inner.apply(input);
    }

    @Override
    public CpuKernel cpu() {
      CpuKernel cpu = inner.cpu();
      return rows -> {
        Iterator<Row> out = cpu.apply(rows);
        TaskContext ctx = TaskContext.get();
        int attempt = ctx.attemptNumber();
        boolean fail = ctx.partitionId() == partition && (everyAttempt || attempt == 0);
        return new Iterator<>() {
          private int n;

          @Override
          public boolean hasNext() {
            if (fail && (n >= 20 || !out.hasNext())) {
              PLANNED_FAILURES.incrementAndGet();
              throw new IllegalStateException(
                  "planned failure in partition " + partition + ", attempt " + attempt);
            }
            return out.hasNext();
          }

          @Override
          public Row next() {
            n++;
            return out.next();
          }
        };
      };
    }
  }

  // ---- helpers ----

  /** The output's files other than hidden ones (checksums), by name. */
  private static Set<String> visible(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString())
          .filter(n -> !n.startsWith("."))
          .collect(Collectors.toCollection(HashSet::new));
    }
  }

  private static List<Path> parts(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().startsWith("part-")).sorted().toList();
    }
  }

  private static long length(List<Path> files) throws IOException {
    long n = 0;
    for (Path p : files) {
      n += Files.size(p);
    }
    return n;
  }

  /** Every regular file under {@code dir}, or none when it does not exist. */
  private static List<Path> filesUnder(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.walk(dir)) {
      return s.filter(Files::isRegularFile).toList();
    }
  }

  private static ParquetFileReader open(Path file) throws IOException {
    return ParquetFileReader.open(
        HadoopInputFile.fromPath(new org.apache.hadoop.fs.Path(file.toUri()), new Configuration()));
  }

  private static long rowsIn(Path file) throws IOException {
    try (ParquetFileReader r = open(file)) {
      return r.getRecordCount();
    }
  }

  private static Set<CompressionCodecName> codecs(Path file) throws IOException {
    Set<CompressionCodecName> out = new HashSet<>();
    try (ParquetFileReader r = open(file)) {
      for (BlockMetaData b : r.getFooter().getBlocks()) {
        for (ColumnChunkMetaData c : b.getColumns()) {
          out.add(c.getCodec());
        }
      }
    }
    return out;
  }

  /** Names and data types, in order; files read back as nullable whatever was declared. */
  private static List<String> namesAndTypes(StructType schema) {
    List<String> out = new ArrayList<>();
    for (StructField f : schema.fields()) {
      out.add(f.name() + ": " + f.dataType().sql());
    }
    return out;
  }

  /** A part file's task and its number among the task's files. */
  private record Name(int task, int file) {}

  /** The part files' names are Spark's, with {@code extension}. */
  private static Map<Path, Name> checkNames(List<Path> parts, String extension) {
    Map<Path, Name> names = new TreeMap<>();
    for (Path p : parts) {
      Matcher m = PART.matcher(p.getFileName().toString());
      assertTrue(m.matches(), p.getFileName().toString());
      assertEquals(extension, m.group(3), p.getFileName().toString());
      names.put(p, new Name(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))));
    }
    return names;
  }

  private static List<String> readBack(Path out) {
    return TestData.sorted(spark.read().parquet(out.toString()).collectAsList());
  }

  private static List<String> mapped(Dataset<Row> df, GpuKernel kernel) {
    return TestData.sorted(GpuPartitions.map(df, kernel).collectAsList());
  }

  /** Each file's (or folder's) size, modification time and contents. */
  private static Map<String, String> snapshot(Path dir) throws IOException {
    Map<String, String> out = new TreeMap<>();
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.toList()) {
        FileTime t = Files.getLastModifiedTime(p);
        String what =
            Files.isDirectory(p)
                ? "dir " + t
                : Files.size(p) + " " + t + " " + Arrays.toString(Files.readAllBytes(p));
        out.put(dir.relativize(p).toString(), what);
      }
    }
    return out;
  }

  private static String messages(Throwable e) {
    StringBuilder b = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      b.append(t.getMessage()).append(" | ");
    }
    return b.toString();
  }

  // ---- writes through Spark ----

  @Test
  void everyTypeWithNullsIsWrittenAndReadsBackAsTheKernelsOutput() throws IOException {
    Dataset<Row> df = TestData.frame(spark, 3000, 4);
    AllTypesKernel kernel = new AllTypesKernel();
    Path out = tmp.resolve("out");

    Written w = GpuPartitions.write(df, kernel, ParquetOutput.to(out.toString()));

    Dataset<Row> back = spark.read().parquet(out.toString());
    assertEquals(namesAndTypes(kernel.outputSchema(TestData.SCHEMA)), namesAndTypes(back.schema()));
    assertEquals(mapped(df, kernel), readBack(out));
    assertTrue(Files.isRegularFile(out.resolve("_SUCCESS")));
    List<Path> parts = parts(out);
    Map<Path, Name> names = checkNames(parts, ".snappy.parquet");
    // One file per task, each of the four partitions has rows.
    assertEquals(4, parts.size(), parts.toString());
    assertEquals(
        Set.of(new Name(0, 0), new Name(1, 0), new Name(2, 0), new Name(3, 0)),
        new HashSet<>(names.values()));
    Set<String> expected = new HashSet<>();
    parts.forEach(p -> expected.add(p.getFileName().toString()));
    expected.add("_SUCCESS");
    assertEquals(expected, visible(out), "nothing else is left in the output");
    long rows = 0;
    for (Path p : parts) {
      rows += rowsIn(p);
      assertEquals(Set.of(CompressionCodecName.SNAPPY), codecs(p), p.toString());
    }
    assertEquals(3000, rows);
    assertEquals(new Written(3000, parts.size(), length(parts), 0), w);
  }

  @ParameterizedTest
  @CsvSource({"zstd, ZSTD, .zstd.parquet", "none, UNCOMPRESSED, .parquet"})
  void theCompressionChosenNamesAndEncodesTheFiles(
      String codec, CompressionCodecName inFile, String extension) throws IOException {
    Dataset<Row> df = TestData.frame(spark, 1500, 2);
    AllTypesKernel kernel = new AllTypesKernel();
    Path out = tmp.resolve("out-" + codec);

    Written w =
        GpuPartitions.write(df, kernel, ParquetOutput.to(out.toString()).withCompression(codec));

    assertEquals(mapped(df, kernel), readBack(out));
    assertTrue(Files.isRegularFile(out.resolve("_SUCCESS")));
    List<Path> parts = parts(out);
    assertEquals(2, parts.size(), parts.toString());
    checkNames(parts, extension);
    for (Path p : parts) {
      assertEquals(Set.of(inFile), codecs(p), p.toString());
    }
    assertEquals(new Written(1500, 2, length(parts), 0), w);
  }

  @Test
  void rowsPerFileSplitsATasksOutputIntoFilesOfThatManyRows() throws IOException {
    Dataset<Row> df = TestData.frame(spark, 2500, 2);
    AllTypesKernel kernel = new AllTypesKernel();
    Path out = tmp.resolve("out");
    int perFile = 400;

    Written w =
        GpuPartitions.write(df, kernel, ParquetOutput.to(out.toString()).withRowsPerFile(perFile));

    assertEquals(mapped(df, kernel), readBack(out));
    List<Path> parts = parts(out);
    Map<Path, Name> names = checkNames(parts, ".snappy.parquet");
    // Each task's row counts, by the files' numbers.
    Map<Integer, TreeMap<Integer, Long>> counts = new TreeMap<>();
    for (Map.Entry<Path, Name> e : names.entrySet()) {
      Name n = e.getValue();
      assertTrue(
          counts.computeIfAbsent(n.task(), t -> new TreeMap<>()).put(n.file(), rowsIn(e.getKey()))
              == null,
          "one file per name: " + names);
    }
    assertEquals(Set.of(0, 1), counts.keySet(), counts.toString());
    long total = 0;
    for (TreeMap<Integer, Long> c : counts.values()) {
      long rows = c.values().stream().mapToLong(Long::longValue).sum();
      total += rows;
      // Files of perFile rows, numbered from 0; the last one with what is left.
      List<Long> expected = new ArrayList<>();
      for (long left = rows; left > 0; left -= perFile) {
        expected.add(Math.min(left, perFile));
      }
      assertEquals(expected.size(), c.size(), counts.toString());
      assertEquals(c.size() - 1, c.lastKey(), counts.toString());
      assertEquals(expected, new ArrayList<>(c.values()), counts.toString());
    }
    assertEquals(2500, total);
    assertEquals(new Written(2500, parts.size(), length(parts), 0), w);
  }

  @Test
  void anOutputOfNoRowsIsOneFileWithTheSchemaAndReadsBack() throws IOException {
    Path in = tmp.resolve("in");
    TestData.frame(spark, 1000, 3).write().parquet(in.toString());
    Dataset<Row> df = spark.read().parquet(in.toString()).where("id < 0");
    assertTrue(
        df.javaRDD().getNumPartitions() > 1, "the case under test: several tasks, every one empty");
    AllTypesKernel kernel = new AllTypesKernel();
    Path out = tmp.resolve("out");

    Written w = GpuPartitions.write(df, kernel, ParquetOutput.to(out.toString()));

    // As Spark's own writer: the first task writes a file of no rows, the others none.
    List<Path> parts = parts(out);
    assertEquals(
        Set.of(new Name(0, 0)), new HashSet<>(checkNames(parts, ".snappy.parquet").values()));
    assertEquals(0, rowsIn(parts.get(0)));
    Dataset<Row> back = spark.read().parquet(out.toString());
    assertEquals(namesAndTypes(kernel.outputSchema(TestData.SCHEMA)), namesAndTypes(back.schema()));
    assertEquals(0, back.count());
    assertEquals(new Written(0, 1, length(parts), 0), w);
  }

  @Test
  void anEmptyFirstTaskBesideTasksWithRowsAddsOneFileOfNoRows() throws IOException {
    Dataset<Row> df = TestData.frameWithFirstPartitionEmpty(spark, 3000, 3);
    List<Long> perTask =
        df.javaRDD()
            .mapPartitions(
                it -> {
                  long n = 0;
                  for (; it.hasNext(); it.next()) {
                    n++;
                  }
                  return List.of(n).iterator();
                })
            .collect();
    assertEquals(0L, perTask.get(0), "the case under test: the first task empty " + perTask);
    assertTrue(perTask.stream().skip(1).anyMatch(n -> n > 0), perTask.toString());
    AllTypesKernel kernel = new AllTypesKernel();
    Path out = tmp.resolve("out");

    Written w = GpuPartitions.write(df, kernel, ParquetOutput.to(out.toString()));

    assertEquals(mapped(df, kernel), readBack(out));
    List<Path> parts = parts(out);
    Map<Path, Name> names = checkNames(parts, ".snappy.parquet");
    long withRows = perTask.stream().filter(n -> n > 0).count();
    assertEquals(withRows + 1, parts.size(), names.toString());
    for (Map.Entry<Path, Name> e : names.entrySet()) {
      assertEquals(e.getValue().task() == 0, rowsIn(e.getKey()) == 0, names.toString());
    }
    assertEquals(
        new Written(
            perTask.stream().mapToLong(Long::longValue).sum(), parts.size(), length(parts), 0),
        w);
  }

  @Test
  void anInputOfNoPartitionsStillWritesTheSchemasFile() throws IOException {
    Dataset<Row> df = spark.createDataFrame(List.<Row>of(), TestData.SCHEMA);
    assertEquals(0, df.javaRDD().getNumPartitions(), "the case under test: no partitions at all");
    AllTypesKernel kernel = new AllTypesKernel();
    Path out = tmp.resolve("out");

    Written w = GpuPartitions.write(df, kernel, ParquetOutput.to(out.toString()));

    List<Path> parts = parts(out);
    assertEquals(1, parts.size(), parts.toString());
    Dataset<Row> back = spark.read().parquet(out.toString());
    assertEquals(namesAndTypes(kernel.outputSchema(TestData.SCHEMA)), namesAndTypes(back.schema()));
    assertEquals(0, back.count());
    assertTrue(Files.isRegularFile(out.resolve("_SUCCESS")));
    assertEquals(new Written(0, 1, length(parts), 0), w);
  }

  @Test
  void anExistingFolderThatIsNotEmptyIsRefusedBeforeAnyWorkAndLeftAsItWas() throws Exception {
    Path out = tmp.resolve("existing");
    Files.createDirectories(out.resolve("sub"));
    Files.writeString(out.resolve("keep.txt"), "someone's data");
    Files.write(out.resolve("sub").resolve("part-00000-old.snappy.parquet"), new byte[] {1, 2, 3});
    Map<String, String> before = snapshot(out);

    spark.sparkContext().setJobGroup("refused", "a refused write", false);
    IllegalArgumentException e;
    try {
      e =
          assertThrows(
              IllegalArgumentException.class,
              () ->
                  GpuPartitions.write(
                      TestData.frame(spark, 100, 2),
                      new CountingKernel(),
                      ParquetOutput.to(out.toString())));
    } finally {
      spark.sparkContext().clearJobGroup();
    }
    assertTrue(e.getMessage().contains(out.toString()), e.getMessage());
    assertTrue(e.getMessage().contains("not empty"), e.getMessage());
    assertEquals(0, ROWS_SEEN.get(), "the kernel never ran");
    assertEquals(0, spark.sparkContext().statusTracker().getJobIdsForGroup("refused").length);
    assertEquals(before, snapshot(out));
  }

  @Test
  void anOutputThatIsAFileIsRefusedAndLeftAsItWas() throws Exception {
    Path out = tmp.resolve("a-file");
    Files.writeString(out, "not a folder");
    Map<String, String> before = snapshot(tmp);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                GpuPartitions.write(
                    TestData.frame(spark, 100, 2),
                    new CountingKernel(),
                    ParquetOutput.to(out.toString())));
    assertTrue(e.getMessage().contains(out.toString()), e.getMessage());
    assertEquals(0, ROWS_SEEN.get());
    assertEquals(before, snapshot(tmp));
  }

  @Test
  void anEmptyExistingFolderIsAccepted() throws IOException {
    Path out = tmp.resolve("empty");
    Files.createDirectories(out);
    Dataset<Row> df = TestData.frame(spark, 500, 2);

    Written w = GpuPartitions.write(df, new CountingKernel(), ParquetOutput.to(out.toString()));

    assertEquals(500, ROWS_SEEN.get());
    assertEquals(mapped(df, new AllTypesKernel()), readBack(out));
    assertTrue(Files.isRegularFile(out.resolve("_SUCCESS")));
    List<Path> parts = parts(out);
    assertEquals(new Written(500, parts.size(), length(parts), 0), w);
  }

  @Test
  void aTaskFailingOnEveryAttemptFailsTheJobAndLeavesNoFiles() throws Exception {
    Path out = tmp.resolve("out");
    Dataset<Row> df = TestData.frame(spark, 400, 1);

    Exception e =
        assertThrows(
            Exception.class,
            () ->
                GpuPartitions.write(
                    df, new FailingKernel(0, true), ParquetOutput.to(out.toString())));
    assertTrue(messages(e).contains("planned failure in partition 0"), messages(e));

    quiet();
    assertEquals(2, PLANNED_FAILURES.get(), "both attempts failed, after writing rows");
    assertEquals(List.of(), filesUnder(out), "no part file, no _SUCCESS, nothing at all");
  }

  @Test
  void aJobFailingAfterAnotherTaskCommittedLeavesNothingAndTheFolderCanBeWrittenAgain()
      throws Exception {
    Path out = tmp.resolve("out");
    Dataset<Row> df = TestData.frame(spark, 400, 2);
    // Partition 0 commits its file; partition 1 fails on every attempt.
    Exception e =
        assertThrows(
            Exception.class,
            () ->
                GpuPartitions.write(
                    df, new FailingKernel(1, true), ParquetOutput.to(out.toString())));
    assertTrue(messages(e).contains("planned failure in partition 1"), messages(e));
    quiet();
    assertEquals(List.of(), filesUnder(out), "the committed task's file is gone too");
    try (Stream<Path> left = Files.list(out)) {
      assertEquals(List.of(), left.toList(), "nothing left in the output folder");
    }
    Written w = GpuPartitions.write(df, new AllTypesKernel(), ParquetOutput.to(out.toString()));
    assertEquals(400, w.rows());
  }

  @Test
  void aTaskFailingOnlyOnItsFirstAttemptIsRetriedAndEachRowIsWrittenOnce() throws Exception {
    Path out = tmp.resolve("out");
    Dataset<Row> df = TestData.frame(spark, 400, 2);

    Written w =
        GpuPartitions.write(df, new FailingKernel(1, false), ParquetOutput.to(out.toString()));

    assertEquals(1, PLANNED_FAILURES.get(), "partition 1 failed once");
    List<String> back = readBack(out);
    assertEquals(400, back.size());
    assertEquals(
        400, spark.read().parquet(out.toString()).select("id").distinct().count(), "ids once");
    assertEquals(mapped(df, new AllTypesKernel()), back);
    List<Path> parts = parts(out);
    Set<String> expected = new HashSet<>();
    parts.forEach(p -> expected.add(p.getFileName().toString()));
    expected.add("_SUCCESS");
    assertEquals(expected, visible(out), "the failed attempt left nothing");
    assertEquals(2, parts.size(), parts.toString());
    assertEquals(new Written(400, 2, length(parts), 0), w);
  }

  // ---- the commit protocol with fake writers ----

  /** The task side of a write, as a task receives it: a deserialized copy. */
  private static ParquetWrite shipped(ParquetWrite write) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream o = new ObjectOutputStream(bytes)) {
      o.writeObject(write);
    }
    try (ObjectInputStream i =
        new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      return (ParquetWrite) i.readObject();
    }
  }

  /** Attempt {@code attempt} of task {@code partition}, as a task of stage 7 opens it. */
  private static TaskFiles open(ParquetWrite write, int partition, int attempt) throws Exception {
    return shipped(write).openTask(7, partition, attempt);
  }

  private static void writeFile(TaskFiles files, byte[] bytes) throws IOException {
    try (OutputStream o = files.create(".parquet")) {
      o.write(bytes, 0, 3);
      for (int i = 3; i < bytes.length; i++) {
        o.write(bytes[i]);
      }
    }
  }

  private static final String COORDINATION = "spark.hadoop.outputCommitCoordination.enabled";

  /**
   * Runs {@code body} with Spark's output commit coordination off: a task commit asks the driver
   * for leave through the running Spark task, and here there is none.
   */
  private static void withoutCoordination(ThrowingRunnable body) throws Exception {
    SparkConf conf = SparkEnv.get().conf();
    assertFalse(conf.contains(COORDINATION));
    conf.set(COORDINATION, "false");
    try {
      body.run();
    } finally {
      conf.remove(COORDINATION);
    }
  }

  private interface ThrowingRunnable {
    void run() throws Exception;
  }

  private static StructType schema() {
    return new AllTypesKernel().outputSchema(TestData.SCHEMA);
  }

  private static org.apache.spark.sql.classic.SparkSession classic() {
    return (org.apache.spark.sql.classic.SparkSession) spark;
  }

  @Test
  void ofTwoAttemptsOfATaskOnlyTheCommittedOnesFileIsPublished() throws Exception {
    Path out = tmp.resolve("out");
    byte[] lost = "attempt 0, aborted".getBytes(StandardCharsets.UTF_8);
    byte[] kept = "attempt 1, committed: a longer file".getBytes(StandardCharsets.UTF_8);
    byte[] other = "partition 1".getBytes(StandardCharsets.UTF_8);
    withoutCoordination(
        () -> {
          ParquetWrite write =
              ParquetWrite.begin(classic(), ParquetOutput.to(out.toString()), schema());
          TaskFiles a0 = open(write, 0, 0);
          TaskFiles a1 = open(write, 0, 1);
          TaskFiles b0 = open(write, 1, 0);
          writeFile(a0, lost);
          writeFile(a1, kept);
          writeFile(b0, other);
          assertEquals(1, a0.files());
          assertEquals(lost.length, a0.bytes());
          assertEquals(kept.length, a1.bytes());

          TaskFiles.Outcome committed = a1.commit(11, false);
          a0.abort(new RuntimeException("lost the race"));
          TaskFiles.Outcome b = b0.commit(5, false);
          assertEquals(List.of(), parts(out), "nothing is published before the job commits");

          Written w = write.commit(List.of(committed, b));

          assertEquals(new Written(16, 2, kept.length + other.length, 0), w);
        });
    assertTrue(Files.isRegularFile(out.resolve("_SUCCESS")));
    List<Path> parts = parts(out);
    Map<Path, Name> names = checkNames(parts, ".parquet");
    assertEquals(List.of(new Name(0, 0), new Name(1, 0)), new ArrayList<>(names.values()));
    assertArrayEquals(kept, Files.readAllBytes(parts.get(0)));
    assertArrayEquals(other, Files.readAllBytes(parts.get(1)));
    Set<String> expected = new HashSet<>();
    parts.forEach(p -> expected.add(p.getFileName().toString()));
    expected.add("_SUCCESS");
    assertEquals(expected, visible(out), "no attempt's folder is left");
  }

  @Test
  void aJobAbortedAfterATaskCommittedLeavesNoFiles() throws Exception {
    Path out = tmp.resolve("out");
    withoutCoordination(
        () -> {
          ParquetWrite write =
              ParquetWrite.begin(classic(), ParquetOutput.to(out.toString()), schema());
          TaskFiles t = open(write, 0, 0);
          writeFile(t, "committed, then the job failed".getBytes(StandardCharsets.UTF_8));
          t.commit(1, false);
          assertFalse(filesUnder(out).isEmpty(), "the task's committed file waits in the output");
          RuntimeException cause = new RuntimeException("another task failed");
          write.abort(cause);
          assertEquals(0, cause.getSuppressed().length, Arrays.toString(cause.getSuppressed()));
        });
    assertEquals(List.of(), filesUnder(out), "no part file, no _SUCCESS, nothing at all");
  }
}
