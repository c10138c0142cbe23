package dev.overlap.executor.bench;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.testing.LocalSession;
import dev.overlap.executor.testing.NormalizeKernel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
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
 * <p>Usage: {@code EmbeddingBenchmark <dir> [rows=10000000] [runs=3] [slots=16]}.
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
    String input = dir.resolve("embeddings.parquet").toString();
    if (!Files.exists(dir.resolve("embeddings.parquet"))) {
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
    double gpu = timed("GPU Parquet scan", runs, written(spark, df, kernel, dir, "out-gpu-"));
    spark.conf().set("spark.overlap.parquet.decode", "HOST");
    double host = timed("host path", runs, written(spark, df, kernel, dir, "out-host-"));
    spark.conf().unset("spark.overlap.parquet.decode");
    double cpu =
        timed(
            "Spark CPU",
            runs,
            run -> {
              df.selectExpr("id", "bucket", "score", NormalizeKernel.sql("emb"))
                  .write()
                  .parquet(dir.resolve("out-cpu-" + run).toString());
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
    compare(spark, dir.resolve("out-gpu-1").toString(), dir.resolve("out-cpu-1").toString());
    compare(spark, dir.resolve("out-gpu-1").toString(), dir.resolve("out-host-1").toString());
    spark.stop();
  }

  /** One warm-up and {@code runs} timed runs (numbered from 1); the median wall in seconds. */
  private static double timed(String name, int runs, Run body) throws Exception {
    double[] walls = new double[runs];
    for (int run = 0; run <= runs; run++) {
      long s = System.nanoTime();
      String what = body.run(run);
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
    }
    Arrays.sort(walls);
    return walls[runs / 2];
  }

  /** One run of the kernel writing {@code prefix + run} under {@code dir}, and its report. */
  private static Run written(
      SparkSession spark, Dataset<Row> df, NormalizeKernel kernel, Path dir, String prefix) {
    return run -> {
      PipelineReport report = PipelineReport.create(spark);
      String out = dir.resolve(prefix + run).toString();
      GpuPartitions.write(df, kernel, ParquetOutput.to(out), report);
      return report.gpuTasks()
          + " GPU tasks, "
          + report.cpuTasks()
          + " CPU tasks, fallbacks "
          + report.parquetFallbacks();
    };
  }

  @FunctionalInterface
  private interface Run {
    String run(int run) throws Exception;
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
