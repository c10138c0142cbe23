package dev.overlap.executor.bench;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.testing.LocalSession;
import dev.overlap.executor.testing.NormalizeKernel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Embeddings scaled to unit length, Parquet in and Parquet out: a table of {@code rows} rows with
 * an {@code array<float>} of 64 elements and three flat columns, through {@link NormalizeKernel} on
 * the GPU Parquet scan and on the host path (Spark's reader, packed), and through Spark's CPU
 * engine with the same higher-order functions ({@link NormalizeKernel#sql}). Each variant runs once
 * to warm up, then {@code runs} times; the medians close the output, with the outputs compared: the
 * GPU's against Spark's, element by element.
 *
 * <p>Usage: {@code EmbeddingBenchmark <dir> [rows=10000000] [runs=3] [slots=16]}. Each run's output
 * is deleted once timed (run 1's once compared), and every output when the benchmark ends, however
 * it ends; the input ({@code <dir>/embeddings.parquet}) is kept for the next run, and the last line
 * names it with its size.
 */
public final class EmbeddingBenchmark {
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    long rows = args.length > 1 ? Long.parseLong(args[1]) : 10_000_000L;
    int runs = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    int slots = args.length > 3 ? Integer.parseInt(args[3]) : 16;
    SparkSession spark =
        LocalSession.start(
            "local[" + slots + "]",
            "overlap-embedding-bench",
            "spark.plugins",
            "dev.overlap.executor.OverlapPlugin",
            "spark.driver.memory",
            "48g",
            "spark.sql.files.maxPartitionBytes",
            "256m",
            "spark.overlap.staging.buffers",
            String.valueOf(2 * slots),
            "spark.overlap.staging.bufferSize",
            "64m",
            "spark.overlap.prefetch.maxBytes",
            "4g");
    Path inputPath = dir.resolve("embeddings.parquet");
    List<Path> outputs = new ArrayList<>();
    try {
      bench(spark, dir, inputPath, rows, runs, slots, outputs);
    } finally {
      try {
        spark.stop();
      } finally {
        try {
          BenchFiles.deleteAll(outputs);
        } catch (IOException e) {
          System.err.println("could not delete every output: " + e);
        }
        BenchFiles.kept(inputPath, "the input");
      }
    }
  }

  private static void bench(
      SparkSession spark,
      Path dir,
      Path inputPath,
      long rows,
      int runs,
      int slots,
      List<Path> outputs)
      throws Exception {
    String input = inputPath.toString();
    if (!Files.exists(inputPath)) {
      long s = System.nanoTime();
      spark
          .range(0, rows, 1, 4 * slots)
          .selectExpr(
              "id",
              "cast(id % 1000 as int) as bucket",
              "cast(id as double) * 0.001 as score",
              "transform(sequence(0, 63), i -> float(sin(id * 0.001 + i) + 1.5)) as emb")
          .write()
          .parquet(input);
      System.out.printf(
          Locale.ROOT, "generated %d rows in %.1f s%n", rows, (System.nanoTime() - s) / 1e9);
    }
    Dataset<Row> df = spark.read().parquet(input);
    System.out.println("GPU: " + GpuStatus.current());
    NormalizeKernel kernel = NormalizeKernel.of(df.schema(), "emb");
    Outputs gpuOut = new Outputs(dir, "out-gpu-", outputs);
    double gpu = timed("GPU Parquet scan", runs, gpuOut, written(spark, df, kernel));
    spark.conf().set("spark.overlap.parquet.decode", "HOST");
    Outputs hostOut = new Outputs(dir, "out-host-", outputs);
    double host = timed("host path", runs, hostOut, written(spark, df, kernel));
    spark.conf().unset("spark.overlap.parquet.decode");
    Outputs cpuOut = new Outputs(dir, "out-cpu-", outputs);
    double cpu =
        timed(
            "Spark CPU",
            runs,
            cpuOut,
            out -> {
              df.selectExpr("id", "bucket", "score", NormalizeKernel.sql("emb"))
                  .write()
                  .parquet(out.toString());
              return "transform/aggregate";
            });
    System.out.printf(
        Locale.ROOT,
        "medians: GPU scan %.3f s, host path %.3f s, Spark CPU %.3f s; GPU scan %.2fx Spark CPU,"
            + " host path %.2fx%n",
        gpu,
        host,
        cpu,
        cpu / gpu,
        cpu / host);
    compare(spark, gpuOut.of(1).toString(), cpuOut.of(1).toString());
    compare(spark, gpuOut.of(1).toString(), hostOut.of(1).toString());
  }

  /**
   * A variant's outputs, {@code <dir>/<prefix><run>}, each recorded in {@code all} before it is
   * written.
   */
  private record Outputs(Path dir, String prefix, List<Path> all) {
    Path of(int run) {
      return dir.resolve(prefix + run);
    }
  }

  /**
   * One warm-up and {@code runs} timed runs (numbered from 1); the median wall in seconds. Each
   * run's output but the first's, which is compared, is deleted once the run is timed.
   */
  private static double timed(String name, int runs, Outputs out, Run body) throws Exception {
    double[] walls = new double[runs];
    for (int run = 0; run <= runs; run++) {
      Path o = out.of(run);
      out.all().add(o);
      long s = System.nanoTime();
      String what = body.run(o);
      double wall = (System.nanoTime() - s) / 1e9;
      if (run > 0) {
        walls[run - 1] = wall;
      }
      System.out.printf(
          Locale.ROOT,
          "%s %s: %.3f s (%s)%n",
          name,
          run == 0 ? "warm-up" : "run " + run,
          wall,
          what);
      if (run != 1) {
        BenchFiles.delete(o);
      }
    }
    Arrays.sort(walls);
    return walls[runs / 2];
  }

  /** One run of the kernel writing {@code out}, and its report. */
  private static Run written(SparkSession spark, Dataset<Row> df, NormalizeKernel kernel) {
    return out -> {
      PipelineReport report = PipelineReport.create(spark);
      GpuPartitions.write(df, kernel, ParquetOutput.to(out.toString()), report);
      return report.gpuTasks()
          + " GPU tasks, "
          + report.cpuTasks()
          + " CPU tasks, fallbacks "
          + report.parquetFallbacks();
    };
  }

  @FunctionalInterface
  private interface Run {
    String run(Path output) throws Exception;
  }

  /** Two outputs side by side, by id: rows, null embeddings, the largest element difference. */
  private static void compare(SparkSession spark, String a, String b) {
    Dataset<Row> x = spark.read().parquet(a).selectExpr("id", "bucket", "score", "emb as ea");
    Dataset<Row> y = spark.read().parquet(b).selectExpr("id as yid", "emb as eb");
    Row r =
        x.join(y, x.col("id").equalTo(y.col("yid")), "full_outer")
            .selectExpr(
                "count(*)",
                "count(id)",
                "count(yid)",
                "sum(if((ea is null) <> (eb is null), 1, 0))",
                "sum(if(size(ea) <> size(eb), 1, 0))",
                "max(aggregate(zip_with(ea, eb, (p, q) -> abs(p - q)), 0f, (m, d) -> greatest(m,"
                    + " d)))",
                "sum(if(ea <> eb, 1, 0))")
            .first();
    System.out.printf(
        Locale.ROOT,
        "compare %s with %s: %s rows (%s and %s), %s null mismatches, %s size mismatches, largest"
            + " element difference %s, %s rows not bit-equal%n",
        Path.of(a).getFileName(),
        Path.of(b).getFileName(),
        r.get(0),
        r.get(1),
        r.get(2),
        r.get(3),
        r.get(4),
        r.get(5),
        r.get(6));
  }
}
