package dev.overlap.executor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.testing.GpuSession;
import dev.overlap.executor.testing.PassThroughKernel;
import dev.overlap.executor.testing.RandomNested;
import dev.overlap.executor.testing.UnsizedChunks;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Files whose compressed chunks say their uncompressed size is 0, which cuDF's reader does not
 * decompress (DuckDB's two files faulted the GPU with an illegal memory access): read on the host,
 * as Spark reads them, with the reason; the same files uncompressed decode on the GPU.
 */
@Tag("gpu")
class UnsizedChunksGpuTest {
  private static SparkSession spark;
  private static Path root;

  @BeforeAll
  static void start() throws Exception {
    root = Files.createTempDirectory("overlap-unsized-gpu");
    spark = GpuSession.start("gpu-unsized", "local[2]", Map.of());
  }

  @AfterEach
  void nothingHeld() {
    GpuSession.assertNothingHeld(spark);
  }

  @AfterAll
  static void stop() {
    GpuSession.stop(spark);
  }

  /** The GPU path's rows of {@code dir}, checked equal to Spark's; its report. */
  private static PipelineReport sameAsSpark(String dir) {
    Dataset<Row> in = spark.read().parquet(dir);
    PipelineReport r = PipelineReport.create(spark);
    Dataset<Row> out = GpuPartitions.map(in, new PassThroughKernel(), r);
    String json = "to_json(struct(*), map('ignoreNullFields', 'false')) as j";
    List<Row> want = in.selectExpr(json).orderBy("j").collectAsList();
    List<Row> got = out.selectExpr(json).orderBy("j").collectAsList();
    assertEquals(want, got, dir);
    assertTrue(want.size() > 0, dir);
    return r;
  }

  private static void allUnsized(PipelineReport r, String dir) {
    assertTrue(r.parquetFallbacks().size() > 0, dir);
    for (String f : r.parquetFallbacks()) {
      assertTrue(f.contains("uncompressed size as 0"), dir + ": " + f);
    }
  }

  @Test
  void duckDbsFilesAreReadOnTheHostAsSparkReadsThem() throws Exception {
    for (String name : List.of("bug3734", "bug4859")) {
      Path dir = Files.createDirectories(root.resolve(name));
      try (InputStream in = getClass().getResourceAsStream("/duckdb/" + name + ".parquet")) {
        Files.copy(in, dir.resolve(name + ".parquet"));
      }
      PipelineReport r = sameAsSpark(dir.toString());
      System.out.println(name + ": " + r.parquetFallbacks());
      allUnsized(r, name);
    }
  }

  @Test
  void sparksNestedFilesWithoutSizesAreReadOnTheHostAndWithoutCompressionOnTheGpu()
      throws Exception {
    for (long seed = 1; seed <= 6; seed++) {
      RandomNested data = new RandomNested(seed);
      for (String codec : List.of("snappy", "zstd", "uncompressed")) {
        String dir = root.resolve("nested-" + seed + "-" + codec).toString();
        var w = data.frame(spark, 2_000, 2).write();
        Map<String, String> options = new java.util.HashMap<>(data.writeOptions());
        options.put("compression", codec);
        options.forEach(w::option);
        w.parquet(dir);
        try (Stream<Path> files = Files.list(Path.of(dir))) {
          for (Path f : files.filter(p -> p.toString().endsWith(".parquet")).toList()) {
            UnsizedChunks.of(f);
          }
        }
        PipelineReport r = sameAsSpark(dir);
        if (codec.equals("uncompressed")) {
          // Other reasons may send a file to the host (a repeated DELTA_BYTE_ARRAY column): not
          // this one.
          assertTrue(
              r.parquetFallbacks().stream().noneMatch(f -> f.contains("uncompressed size")),
              dir + ": " + r.parquetFallbacks());
          assertTrue(r.gpuTasks(InputPath.PARQUET) > 0, dir + ": " + r.gpuNotTaken());
        } else {
          allUnsized(r, dir);
        }
      }
    }
  }
}
