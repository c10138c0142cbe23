package dev.overlap.jobs.tpch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.jobs.TestSessions;
import dev.overlap.jobs.cli.ProgressText;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** generate's file layout and its progress line. */
public class TpchGenerateTest {
  static SparkSession spark;

  @TempDir Path tmp;

  @BeforeAll
  static void start() {
    spark = TestSessions.local("local[2]", "spark.sql.shuffle.partitions", "2");
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  @Test
  void partsPerTableAreThoseTheBenchmarksUse() {
    assertEquals(1, TpchGenerate.parts(0.01));
    assertEquals(1, TpchGenerate.parts(1));
    assertEquals(10, TpchGenerate.parts(10));
    assertEquals(15_000, TpchGenerate.orderCount(0.01, 1));
    assertEquals(15_000_000, TpchGenerate.orderCount(10, 10));
  }

  @Test
  void theTimeLeftIsEstimatedFromTheRateSoFar() {
    assertEquals("estimating the time left", ProgressText.timeLeft(2_000_000_000L, 0, 100));
    assertEquals("estimating the time left", ProgressText.timeLeft(100_000_000L, 10, 100));
    // 25 of 100 in 4 s: 75 more take 12 s.
    assertEquals("about 12 s left", ProgressText.timeLeft(4_000_000_000L, 25, 100));
    assertEquals("about 3.0 s left", ProgressText.timeLeft(1_000_000_000L, 25, 100));
    assertEquals("3 min 20 s", ProgressText.duration(200_000_000_000L));
    assertEquals("1 h 5 min", ProgressText.duration(3_900_000_000_000L));
    assertEquals(
        "generating TPC-H SF 10:  45% (lineitem: 6,750,000 of 15,000,000 orders), about 12 s left",
        ProgressText.line(10, 45, "lineitem", 6_750_000, 15_000_000, "about 12 s left"));
  }

  @Test
  void theDefaultScaleShowsProgressOnOneLineAndKeepsOneFilePerTable() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    String out = tmp.resolve("sf").toString();
    long rows =
        TpchGenerate.run(
            spark, 0.01, out, new PrintStream(bytes, true, StandardCharsets.UTF_8), true);
    assertEquals(60_175 + 15_000, rows);
    String text = bytes.toString(StandardCharsets.UTF_8);
    // One line, redrawn in place, then a newline at the end.
    assertTrue(text.startsWith("\rgenerating TPC-H SF 0.01: "), text);
    assertTrue(text.endsWith("\n"), text);
    assertEquals(1, text.chars().filter(c -> c == '\n').count(), text);
    String[] draws = text.strip().split("\r");
    String last = draws[draws.length - 1].strip();
    assertTrue(
        last.startsWith("generating TPC-H SF 0.01: 100% (15,000 orders and their line items) in "),
        last);
    // Progress before the end, in orders of the table being written, never going back.
    Pattern p = Pattern.compile("(\\d+)% \\((lineitem|orders): ([\\d,]+) of 15,000( orders)?\\), ");
    List<Integer> percents = new ArrayList<>();
    for (String d : draws) {
      Matcher m = p.matcher(d);
      if (m.find()) {
        percents.add(Integer.parseInt(m.group(1)));
        assertTrue(d.contains(" left"), d);
      }
    }
    assertTrue(draws.length == 1 || !percents.isEmpty(), text);
    for (int i = 1; i < percents.size(); i++) {
      assertTrue(percents.get(i) >= percents.get(i - 1), percents.toString());
    }
    for (String table : List.of("lineitem", "orders")) {
      try (Stream<Path> files = Files.list(Path.of(out, table))) {
        assertEquals(
            1, files.filter(f -> f.getFileName().toString().endsWith(".parquet")).count(), table);
      }
    }
  }

  @Test
  void outsideATerminalEachStepIsALine() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    TpchGenerate.run(
        spark,
        0.001,
        tmp.resolve("log").toString(),
        new PrintStream(bytes, true, StandardCharsets.UTF_8),
        false);
    String text = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(!text.contains("\r"), text);
    assertTrue(text.endsWith("\n"), text);
    String[] lines = text.split("\n");
    assertTrue(
        lines[lines.length - 1].startsWith(
            "generating TPC-H SF 0.001: 100% (1,500 orders and their line items) in "),
        text);
  }

  @Test
  void executorsReportTheOrdersTheyGeneratedAtEachTaskEnd() throws Exception {
    PrintStream quiet = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    try (TpchProgress progress = new TpchProgress(spark, 1, 100, quiet, false)) {
      TpchOrderCounter counter = progress.counter();
      JavaSparkContext.fromSparkContext(spark.sparkContext())
          .parallelize(List.of(1, 2, 3, 4), 4)
          .foreach(i -> counter.add(10L * i));
      // The listener has seen every task's end, and each one's accumulator value with it.
      spark.sparkContext().listenerBus().waitUntilEmpty(10_000);
      assertEquals(100, progress.reported());
    }
  }
}
