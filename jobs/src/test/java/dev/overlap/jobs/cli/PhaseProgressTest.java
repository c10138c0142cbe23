package dev.overlap.jobs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.PipelineReport;
import dev.overlap.jobs.TestTables;
import dev.overlap.jobs.etl.TestEtl;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The progress line of etl's and features' long phases. */
public class PhaseProgressTest {
  static SparkSession spark;

  @TempDir Path tmp;

  @BeforeAll
  static void start() {
    spark = TestTables.session();
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  @Test
  void theLineSaysTasksAndRowsDoneAndAShareOfTheScanStagesOnly() throws Exception {
    TestTables.lineitem(spark, tmp.resolve("one"));
    spark
        .read()
        .parquet(tmp.resolve("one").toString())
        .repartition(6)
        .write()
        .parquet(tmp.resolve("six").toString());
    Dataset<Row> lineitem = spark.read().parquet(tmp.resolve("six").toString());
    long expected = lineitem.count();
    PipelineReport report = PipelineReport.create(spark);
    // Planned before the phase, run in it, as etl does: the kernels' stage is the phase's.
    Supplier<Dataset<Row>> q1 = TestEtl.plannedQ1(lineitem, report);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    String line;
    try (PhaseProgress p = new PhaseProgress(spark, "etl Q1", print(bytes), 80, 1000)) {
      assertEquals("etl Q1: starting, ", p.text().replaceAll("[0-9.]+ s$", ""));
      assertEquals(4, q1.get().collectAsList().size());
      // The listeners have seen every task's end.
      spark.sparkContext().listenerBus().waitUntilEmpty(10_000);
      line = p.text();
    }
    // The kernel's rows, from its accumulator; the tasks of the kernels' one stage (the driver adds
    // the partial rows up, in no stage).
    Matcher m =
        Pattern.compile("etl Q1: 100% \\((\\d+) of (\\d+) input tasks, ([0-9,]+) rows\\) in .*")
            .matcher(line);
    assertTrue(m.matches(), line);
    assertEquals(m.group(1), m.group(2), line);
    assertEquals(report.rowsIn(), expected);
    assertEquals(String.format("%,d", expected), m.group(3), line);
    assertEquals(
        spark.read().parquet(tmp.resolve("six").toString()).rdd().getNumPartitions(),
        Integer.parseInt(m.group(2)),
        line);
  }

  @Test
  void aLongPhaseIsRedrawnInPlaceAndErasedAtItsEnd() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PhaseProgress p =
        new PhaseProgress(spark, "features first pass", print(bytes), 60, 1000)) {
      // 8 tasks of 0.4 s on 2 slots: at least 1.6 s; the line shows from the first second.
      spark
          .range(0, 8, 1, 8)
          .mapPartitions(
              (MapPartitionsFunction<Long, Long>)
                  it -> {
                    Thread.sleep(400);
                    return it;
                  },
              Encoders.LONG())
          .count();
    }
    String text = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(text.startsWith("\rfeatures first pass: "), text);
    // Each drawing's rows are those of its tasks done (one row per task), its share theirs of 8.
    Matcher draw =
        Pattern.compile(
                "\rfeatures first pass: +(\\d+)% \\((\\d) of 8 input tasks, (\\d) rows\\) in ")
            .matcher(text);
    int draws = 0;
    while (draw.find()) {
      draws++;
      int done = Integer.parseInt(draw.group(2));
      assertEquals(done, Integer.parseInt(draw.group(3)), text);
      assertEquals(100 * done / 8, Integer.parseInt(draw.group(1)), text);
    }
    assertTrue(draws >= 2, text);
    assertEquals(-1, text.indexOf('\n'), "drawn in place, never a new line: " + text);
    // Erased at the end: blanks over the widest line drawn, the cursor back at the margin.
    assertTrue(text.matches("(?s).*\r {59,}\r$"), text);
  }

  @Test
  void aSecondScanIsNamedAndItsShareIsItsOwn() throws Exception {
    try (PhaseProgress p =
        new PhaseProgress(
            spark, "features first pass", print(new ByteArrayOutputStream()), 80, 600_000)) {
      spark.range(0, 40, 1, 4).count();
      spark.range(0, 30, 1, 3).count();
      spark.sparkContext().listenerBus().waitUntilEmpty(10_000);
      assertTrue(
          p.text()
              .startsWith("features first pass, scan 2: 100% (3 of 3 input tasks, 70 rows) in "),
          p.text());
    }
  }

  @Test
  void aFailureStopsTheLineAndErasesIt() throws Exception {
    CountDownLatch drawn = new CountDownLatch(1);
    ByteArrayOutputStream bytes =
        new ByteArrayOutputStream() {
          @Override
          public synchronized void write(int b) {
            super.write(b);
            drawn.countDown();
          }

          @Override
          public synchronized void write(byte[] b, int off, int len) {
            super.write(b, off, len);
            drawn.countDown();
          }
        };
    try (PhaseProgress p = new PhaseProgress(spark, "etl Q1", print(bytes), 40, 0)) {
      assertTrue(drawn.await(10, TimeUnit.SECONDS), "nothing drawn");
      PhaseProgress.stop(); // as Main does before a failure's line
      String text = bytes.toString(StandardCharsets.UTF_8);
      assertTrue(text.matches("(?s)\retl Q1: starting.*\r {39,}\r$"), text);
    }
  }

  @Test
  void aLineLongerThanTheTerminalIsCutToFit() {
    String line = "x".repeat(120);
    assertEquals(79, ProgressText.fit(line, 80).length());
    assertTrue(ProgressText.fit(line, 80).endsWith("…"));
    assertEquals("short", ProgressText.fit("short", 80));
  }

  @Test
  void nothingIsDrawnForAPhaseShorterThanTheDelay() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PhaseProgress p = new PhaseProgress(spark, "etl Q6", print(bytes), 80, 600_000)) {
      spark.range(10).count();
    }
    assertEquals("", bytes.toString(StandardCharsets.UTF_8));
  }

  @Test
  void notATerminalDrawsNothing() {
    // The tests' standard output is not a terminal.
    try (PhaseProgress p = PhaseProgress.start(spark, "etl Q1")) {
      assertTrue(p.text().isEmpty());
    }
  }

  private static PrintStream print(ByteArrayOutputStream bytes) {
    return new PrintStream(bytes, true, StandardCharsets.UTF_8);
  }
}
