package dev.overlap.jobs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.PipelineReport;
import dev.overlap.jobs.TestSessions;
import dev.overlap.jobs.etl.TestEtl;
import dev.overlap.jobs.tpch.TpchGenerate;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The summary of a job whose kernels ran their CPU implementation: the executor starts with the GPU
 * path off, as on a machine without a GPU, whether or not this one has one.
 */
public class JobSummaryTest {
  static SparkSession spark;
  @TempDir static Path tmp;
  static String lineitem;
  static long lineitemRows;

  @BeforeAll
  static void start() {
    spark =
        TestSessions.withPlugin(
            "local[2]", "spark.overlap.enabled", "false", "spark.sql.shuffle.partitions", "2");
    String data = tmp.resolve("tpch").toString();
    TpchGenerate.run(
        spark,
        0.001,
        data,
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
        false);
    lineitem = data + "/lineitem";
    lineitemRows = spark.read().parquet(lineitem).count();
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  @Test
  void etlCountsTheInputOnceAndGivesEachStepsCpuFigures() {
    JobSummary summary = new JobSummary("etl");
    long rowsOut = TestEtl.run(spark, lineitem, tmp.resolve("etl").toString(), summary);
    String text = summary.render(rowsOut, 2);

    // Q1 and Q6 both read lineitem: it is counted once.
    assertTrue(
        text.contains(String.format(Locale.ROOT, "rows in        %,d%n", lineitemRows)), text);
    assertTrue(text.contains("path           CPU (spark.overlap.enabled=false)\n"), text);
    for (String step : new String[] {"Q1", "Q6"}) {
      Pattern p =
          Pattern.compile(
              "(?m)^"
                  + step
                  + " +(\\d+) tasks on the CPU, ([\\d,]+) rows in, ([\\d,]+) out; busy: CPU kernel"
                  + " (\\d+\\.\\d\\d) s \\(summed over 2 task threads, reading its input"
                  + " included\\)$");
      Matcher m = p.matcher(text);
      assertTrue(m.find(), step + " has no CPU line:\n" + text);
      assertTrue(Integer.parseInt(m.group(1)) > 0, text);
      assertEquals(lineitemRows, Long.parseLong(m.group(2).replace(",", "")), text);
    }
    assertTrue(!text.contains("batches,"), text);
  }

  @Test
  void theCpuKernelsTimeIsMeasuredOnTheTaskThreads() {
    Dataset<Row> in = spark.read().parquet(lineitem);
    PipelineReport report = PipelineReport.create(spark);
    long start = System.nanoTime();
    TestEtl.q6(in, report).count();
    long wall = System.nanoTime() - start;
    assertTrue(report.cpuTasks() > 0 && report.gpuTasks() == 0);
    assertEquals(lineitemRows, report.rowsIn());
    assertTrue(report.cpuKernelNanos() > 0, "no CPU kernel time");
    // Two task threads at most: the kernel cannot have been busy longer than twice the wall.
    assertTrue(report.cpuKernelNanos() <= 2 * wall, report.cpuKernelNanos() + " > 2 * " + wall);
  }

  @Test
  void aJobMayStateTheRowsItRead() {
    JobSummary summary = new JobSummary("join");
    summary.rowsIn(1234);
    assertTrue(summary.render(5, 2).contains("rows in        1,234\n"));
  }

  /** A report whose figures are given by method name; every other figure is 0. */
  static PipelineReport report(java.util.Map<String, Object> figures) {
    return (PipelineReport)
        java.lang.reflect.Proxy.newProxyInstance(
            PipelineReport.class.getClassLoader(),
            new Class<?>[] {PipelineReport.class},
            (proxy, m, args) -> {
              String key = m.getName() + (args == null ? "" : ":" + args[0]);
              if (figures.containsKey(key)) {
                return figures.get(key);
              }
              if (m.getReturnType() == java.util.Optional.class) {
                return java.util.Optional.empty();
              }
              return m.getReturnType() == java.util.List.class ? java.util.List.of() : 0L;
            });
  }

  @Test
  void aSessionWithoutThePluginIsNamedOnThePathLine() {
    JobSummary summary = new JobSummary("etl");
    summary.add(
        "Q1",
        report(
            java.util.Map.of(
                "pluginNotLoaded",
                    java.util.Optional.of("spark.plugins=dev.overlap.executor.OverlapPlugin"),
                "cpuTasks", 3L,
                "rowsIn", 600L,
                "rowsOut", 4L,
                "cpuKernelNanos", 1_500_000_000L)));
    String text = summary.render(4, 2);
    assertTrue(
        text.contains(
            "path           CPU path: plugin not loaded (set"
                + " spark.plugins=dev.overlap.executor.OverlapPlugin)\n"),
        text);
    // What ran: the CPU tasks and their time, no GPU figures.
    assertTrue(
        text.contains(
            "Q1             3 tasks on the CPU, 600 rows in, 4 out; busy: CPU kernel 1.50 s"
                + " (summed over 2 task threads, reading its input included)\n"),
        text);
    assertTrue(!text.contains("batches,") && !text.contains("copy back"), text);
  }

  @Test
  void aStepWhoseColumnsTheGpuDoesNotTakeSaysSoOnThePathLine() {
    JobSummary summary = new JobSummary("etl");
    String why = "input of K: unsupported column type: 'tags' (array<string>). Supported: int";
    summary.add(
        "Q1", report(java.util.Map.of("gpuNotTaken", java.util.Optional.of(why), "cpuTasks", 2L)));
    String text = summary.render(4, 2);
    assertTrue(text.contains("path           CPU (" + why + ")\n"), text);
  }

  @Test
  void aSessionWithThePluginIsNotCalledOneWithout() {
    JobSummary summary = new JobSummary("etl");
    summary.add("Q1", report(java.util.Map.of("cpuTasks", 3L)));
    String text = summary.render(4, 2);
    assertTrue(text.contains("path           CPU ("), text);
    assertTrue(!text.contains("plugin not loaded"), text);
  }

  @Test
  void theInputLineSaysWhichPathRanWithTheParquetFiguresAndWhyNot() {
    PipelineReport r =
        report(
            java.util.Map.of(
                "gpuTasks:PARQUET", 18L,
                "gpuTasks:COLUMNAR", 2L,
                "parquetFiles", 9L,
                "parquetRowGroups", 18L,
                "parquetCompressedBytes", 530_000_000L,
                "decodeNanos", 180_000_000L,
                "parquetFallbacks",
                    java.util.List.of(
                        "a.parquet: column 'x' is compressed with LZO, which the GPU does not"
                            + " decompress")));
    assertEquals(
        "               input: Spark columnar batches packed on the host (2 tasks); Parquet"
            + " decoded on the GPU (18 tasks: 9 files, 18 row groups, 0.53 GB compressed, decode"
            + " 0.18 s)\n"
            + "               decoded on the host: a.parquet: column 'x' is compressed with LZO,"
            + " which the GPU does not decompress\n",
        JobSummary.inputLine("Q1", r).replace(System.lineSeparator(), "\n"));
  }

  @Test
  void aFaultIsNamedOnceAndATaskThatFellBackIsACpuTask() {
    String fault =
        "part-00000.parquet: the GPU failed fatally while decoding it (cudaErrorIllegalAddress: an"
            + " illegal memory access was encountered); it is read on the host from now on";
    JobSummary summary = new JobSummary("etl");
    summary.add(
        "Q1",
        report(
            java.util.Map.of(
                "gpuTasks", 3L,
                "gpuTasks:PARQUET", 3L,
                "cpuTasks", 2L,
                "fellBackTasks", 1L,
                "gpuFaults", java.util.List.of(fault))));
    summary.add(
        "Q6", report(java.util.Map.of("cpuTasks", 4L, "gpuFaults", java.util.List.of(fault))));
    String text = summary.render(4, 2);
    assertEquals(1, text.split("GPU fault: ", -1).length - 1, text);
    assertTrue(text.contains("Q1             GPU fault: " + fault + "\n"), text);
    assertTrue(
        text.contains(
            "Q1             1 of its CPU tasks began on the GPU and went on on the CPU after a"
                + " fatal GPU error\n"),
        text);
    assertTrue(text.contains("path           mixed GPU and CPU\n"), text);
  }
}
