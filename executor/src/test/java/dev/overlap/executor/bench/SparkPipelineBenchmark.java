package dev.overlap.executor.bench;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.testing.LocalSession;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The pipeline through Spark: GpuPartitions.map over Parquet (read as columnar batches), the
 * per-batch partial aggregate of {@link PassesKernel} on the GPU, the final sum in Spark. Reports
 * each stage's busy time, the bottleneck and {@code max(stage busy) / wall}, and checks the result
 * against Spark's own CPU computation.
 *
 * <p>Usage: {@code SparkPipelineBenchmark <dir> [gigabytes=8] [passes=20] [slots=8] [runs=5]}: one
 * warm-up run, then {@code runs} timed runs; the medians close the output. It writes only its
 * input, {@code <dir>/bench.parquet}, kept for the next run: the last line names it with its size.
 */
public final class SparkPipelineBenchmark {
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    double gb = args.length > 1 ? Double.parseDouble(args[1]) : 8;
    int passes = args.length > 2 ? Integer.parseInt(args[2]) : 20;
    int slots = args.length > 3 ? Integer.parseInt(args[3]) : 8;
    int runs = args.length > 4 ? Integer.parseInt(args[4]) : 5;
    long rows = (long) (gb * 1e9 / 16); // two 8-byte columns
    SparkSession spark =
        LocalSession.start(
            "local[" + slots + "]",
            "overlap-spark-bench",
            "spark.plugins",
            "dev.overlap.executor.OverlapPlugin",
            "spark.driver.memory",
            "48g",
            "spark.sql.ansi.enabled",
            "false", // the kernel wraps around like Java
            "spark.sql.parquet.compression.codec",
            "uncompressed",
            "spark.sql.parquet.columnarReaderBatchSize",
            "65536",
            "spark.sql.files.maxPartitionBytes",
            "256m",
            "spark.overlap.staging.buffers",
            String.valueOf(2 * slots),
            "spark.overlap.staging.bufferSize",
            "64m",
            "spark.overlap.prefetch.maxBytes",
            "4g");
    try {
      String path = dir.resolve("bench.parquet").toString();
      if (!Files.exists(dir.resolve("bench.parquet"))) {
        long s = System.nanoTime();
        spark
            .range(0, rows, 1, 4 * slots)
            .selectExpr("id * 2654435761 % 1000003 as x", "cast(id as double) * 0.5 as y")
            .write()
            .parquet(path);
        System.out.printf(
            Locale.ROOT, "generated %d rows in %.1f s%n", rows, (System.nanoTime() - s) / 1e9);
      }
      Dataset<Row> df = spark.read().parquet(path);
      System.out.println("GPU: " + GpuStatus.current());
      PassesKernel kernel = new PassesKernel(passes, df.schema().fieldIndex("x"));
      double[] walls = new double[runs];
      double[] efficiencies = new double[runs];
      for (int run = 0; run <= runs; run++) {
        PipelineReport report = PipelineReport.create(spark);
        long s = System.nanoTime();
        Row r = GpuPartitions.map(df, kernel, report).selectExpr("sum(sum)", "sum(n)").first();
        long wall = System.nanoTime() - s;
        if (run > 0) {
          walls[run - 1] = wall / 1e9;
          efficiencies[run - 1] = report.efficiency(wall, slots);
        }
        System.out.printf(
            Locale.ROOT,
            "%s: %d rows, %d batches, %d GPU tasks, %d CPU tasks, result sum=%s n=%s%n%s",
            run == 0 ? "warm-up" : "run " + run,
            report.rowsIn(),
            report.batches(),
            report.gpuTasks(),
            report.cpuTasks(),
            r.get(0),
            r.get(1),
            report.stageSummary(wall, slots));
      }
      java.util.Arrays.sort(walls);
      java.util.Arrays.sort(efficiencies);
      System.out.printf(
          Locale.ROOT,
          "median of %d runs: wall %.3f s, efficiency %.3f%n",
          runs,
          walls[runs / 2],
          efficiencies[runs / 2]);
      // The same sum on Spark's CPU engine, with the same 64-bit wrap-around.
      StringBuilder expr = new StringBuilder("x");
      for (int i = 0; i < passes; i++) {
        expr.insert(0, "(").append(" * 3 + 1)");
      }
      long s = System.nanoTime();
      Row cpu = df.selectExpr("sum(" + expr + ")", "count(*)").first();
      System.out.printf(
          Locale.ROOT,
          "Spark CPU: sum=%s n=%s in %.3f s%n",
          cpu.get(0),
          cpu.get(1),
          (System.nanoTime() - s) / 1e9);
    } finally {
      try {
        spark.stop();
      } finally {
        BenchFiles.kept(dir.resolve("bench.parquet"), "the input");
      }
    }
  }
}
