package dev.overlap.executor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.overlap.executor.testing.GpuSession;
import dev.overlap.executor.testing.PageMutations;
import dev.overlap.executor.testing.PassThroughKernel;
import dev.overlap.executor.testing.RandomNested;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The decode fuzzer: valid files (flat types and random nested columns, several codecs and page
 * versions) damaged at random ({@link PageMutations}), many seeds, each read by Spark and by the
 * GPU path. For each, the GPU path must give Spark's rows (decoded on the GPU or read on the host),
 * or fail where Spark's reader fails too; never differ, never fail where Spark succeeds, never wait
 * past a minute, never fault the GPU. A fault fences the GPU of this JVM for good, so this class
 * runs in a JVM of its own ({@code tools/gpu-suite.sh class:dev.overlap.executor.api.
 * DecodeFuzzGpuTest}); a fault ends the seeds there. Seeds: {@code -Doverlap.fuzz.seeds} (200).
 */
@Tag("gpu-fault")
class DecodeFuzzGpuTest {
  private static SparkSession spark;
  private static Path root;
  private static final List<Path> BASES = new ArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    root = Files.createTempDirectory("overlap-fuzz-gpu");
    spark = GpuSession.start("gpu-fuzz", "local[2]", Map.of());
    String[][] ways = {
      {"snappy", "v1", "true"}, {"none", "v1", "true"}, {"none", "v2", "false"},
      {"zstd", "v2", "true"}, {"none", "v1", "false"}, {"gzip", "v1", "true"}
    };
    for (int i = 0; i < ways.length; i++) {
      String dir = root.resolve("flat-" + i).toString();
      spark
          .range(0, 3_000)
          .selectExpr(
              "id",
              "cast(id % 13 as int) as i",
              "if(id % 7 = 0, null, concat('v', id % 101)) as s",
              "id * 0.25 as d",
              "cast(id % 1000 as decimal(12,2)) as m",
              "date_add(date'2020-01-01', cast(id % 400 as int)) as day",
              "id % 3 = 0 as b")
          .coalesce(1)
          .write()
          .option("compression", ways[i][0])
          .option("parquet.writer.version", ways[i][1])
          .option("parquet.enable.dictionary", ways[i][2])
          .option("parquet.page.size", "4096")
          .parquet(dir);
      BASES.add(onlyFile(dir));
      RandomNested nested = new RandomNested(100 + i);
      String ndir = root.resolve("nested-" + i).toString();
      var w = nested.frame(spark, 2_000, 1).coalesce(1).write();
      nested.writeOptions().forEach(w::option);
      w.option("compression", ways[i][0]).parquet(ndir);
      BASES.add(onlyFile(ndir));
    }
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  private static Path onlyFile(String dir) throws Exception {
    try (Stream<Path> f = Files.list(Path.of(dir))) {
      return f.filter(p -> p.toString().endsWith(".parquet")).findFirst().orElseThrow();
    }
  }

  /** Spark's rows of {@code dir} as JSON, sorted; or the first line of why it failed. */
  private static Object read(String dir, boolean gpu, PipelineReport r) {
    try {
      var in = spark.read().parquet(dir);
      var out = gpu ? GpuPartitions.map(in, new PassThroughKernel(), r) : in;
      return out.selectExpr("to_json(struct(*), map('ignoreNullFields', 'false')) as j")
          .orderBy("j")
          .collectAsList();
    } catch (Exception e) {
      // SparkException, which a failed read throws, is a checked exception.
      return new Failed(String.valueOf(e.getMessage()).lines().findFirst().orElse(""));
    }
  }

  private record Failed(String why) {}

  @Test
  void damagedFilesGiveSparksRowsOrFailAsSparkDoes() throws Exception {
    int seeds = Integer.getInteger("overlap.fuzz.seeds", 200);
    Map<String, Integer> outcomes = new TreeMap<>();
    List<String> bad = new ArrayList<>();
    long start = System.nanoTime();
    ExecutorService one = Executors.newSingleThreadExecutor();
    int run = 0;
    for (long seed = 1; seed <= seeds; seed++, run++) {
      Random rnd = new Random(seed);
      Path base = BASES.get(rnd.nextInt(BASES.size()));
      Path dir = Files.createDirectories(root.resolve("seed-" + seed));
      Path file = Files.copy(base, dir.resolve("part-0.parquet"));
      String what = PageMutations.damage(file, rnd);
      PipelineReport r = PipelineReport.create(spark);
      Object want;
      Object got;
      try {
        want = one.submit(() -> read(dir.toString(), false, null)).get(60, TimeUnit.SECONDS);
        got = one.submit(() -> read(dir.toString(), true, r)).get(60, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        bad.add("seed " + seed + " (" + base.getParent().getFileName() + ", " + what + "): STALL");
        outcomes.merge("stall", 1, Integer::sum);
        break;
      }
      String outcome;
      if (want instanceof Failed) {
        outcome = got instanceof Failed ? "both fail" : "GPU path reads what Spark refuses";
      } else if (got instanceof Failed f) {
        outcome = "GPU path fails where Spark reads";
        what += ": " + f.why();
      } else if (!want.equals(got)) {
        outcome = "differs";
      } else {
        outcome = r.parquetFallbacks().isEmpty() ? "equal, on the GPU" : "equal, on the host";
      }
      boolean fenced = !GpuStatus.current().gpu();
      if (fenced) {
        outcome = "GPU fault (" + outcome + ")";
      }
      outcomes.merge(outcome, 1, Integer::sum);
      if (!outcome.startsWith("equal") && !outcome.equals("both fail")) {
        bad.add(
            "seed "
                + seed
                + " ("
                + base.getParent().getFileName()
                + ", "
                + what
                + "): "
                + outcome
                + " "
                + r.parquetFallbacks());
      }
      if (fenced) {
        break;
      }
    }
    one.shutdownNow();
    System.out.printf(
        "decode fuzzer: %d of %d seeds in %.1f s: %s%n",
        run, seeds, (System.nanoTime() - start) / 1e9, outcomes);
    bad.forEach(b -> System.out.println("  " + b));
    assertEquals(List.of(), bad);
  }
}
