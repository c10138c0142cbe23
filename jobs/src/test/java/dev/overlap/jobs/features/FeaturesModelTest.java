package dev.overlap.jobs.features;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.jobs.TestSessions;
import dev.overlap.jobs.cli.JobArgs;
import dev.overlap.jobs.cli.JobPaths;
import dev.overlap.jobs.cli.JobSummary;
import dev.overlap.jobs.cli.UsageException;
import dev.overlap.jobs.delta.JobInput;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The features job's model options on real Parquet: {@code --fit-only --save-model} saves a model
 * and writes no features; {@code --model} applies it to other data with the first data's statistics
 * and columns; a model folder is replaced only when it holds a model and {@code --overwrite} is
 * given; the options that do not go together are refused before any work.
 */
public class FeaturesModelTest {
  static SparkSession spark;
  @TempDir static Path dir;

  @BeforeAll
  static void start() {
    spark = TestSessions.local("local[2]");
    spark
        .sql("select id, id * 2.0 as x, cast(id % 3 as string) as s from range(300)")
        .write()
        .parquet(dir.resolve("train").toString());
    spark
        .sql("select id, 1000 + id * 2.0 as x, cast(id % 5 as string) as s from range(300, 400)")
        .write()
        .parquet(dir.resolve("test").toString());
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  private static ModelOptions options(String... args) throws Exception {
    JobPaths paths =
        new JobPaths(spark.sparkContext().hadoopConfiguration(), Paths.get(""), Optional.empty());
    JobArgs a = JobArgs.parse(args);
    return ModelOptions.check(a, paths, a.get("--output").orElse(null));
  }

  private static String message(String... args) {
    return assertThrows(UsageException.class, () -> options(args)).getMessage();
  }

  @Test
  void aModelSavedByFitOnlyAppliesTheTrainingStatisticsToOtherData(@TempDir Path out)
      throws Exception {
    String train = dir.resolve("train").toString();
    String test = dir.resolve("test").toString();
    String model = out.resolve("model").toString();
    JobSummary fit = new JobSummary("features");
    long rows =
        FeaturesJob.fitOnly(
            spark,
            JobInput.parquet(train),
            20,
            options("features", "--fit-only", "--save-model", model),
            fit);
    assertEquals(300, rows);
    assertTrue(Files.isDirectory(out.resolve("model/metadata")));
    assertTrue(fit.render(rows, 2).contains("fitted on "), fit.render(rows, 2));
    String features = out.resolve("features").toString();
    JobSummary apply = new JobSummary("features");
    FeaturesJob.run(
        spark,
        JobInput.parquet(test),
        features,
        20,
        options("features", "--model", model),
        OutputOptions.NONE,
        apply);
    assertTrue(apply.render(100, 2).contains("loaded from " + model), apply.render(100, 2));
    assertFalse(apply.render(100, 2).contains("first pass"), "a saved model needs no first pass");
    // The training data's x: 0, 2, …, 598 (mean 299); its s: "0", "1", "2", each 100 times.
    double mean = 299;
    double std = Math.sqrt(4 * 300 * 301 / 12.0);
    Map<Long, Row> byId = new HashMap<>();
    List<Row> got = spark.read().parquet(features).collectAsList();
    for (Row r : got) {
      long id = Math.round(r.<Double>getAs("id_std") * Math.sqrt(300 * 301 / 12.0) + 149.5);
      byId.put(id, r);
    }
    assertEquals(100, byId.size());
    for (long id = 300; id < 400; id++) {
      Row r = byId.get(id);
      assertEquals((1000 + id * 2.0 - mean) / std, r.<Double>getAs("x_std"), 1e-9, "x of " + id);
      int s = (int) (id % 5);
      assertEquals(s < 3 ? s : 3, r.<Integer>getAs("s_idx"), "s of " + id);
    }
    assertEquals(
        List.of("id_std", "id_log1p", "x_std", "x_log1p", "s_idx"),
        List.of(spark.read().parquet(features).columns()));
  }

  @Test
  void aModelFolderIsReplacedOnlyWhenItHoldsAModelAndOverwriteIsGiven(@TempDir Path out)
      throws Exception {
    String model = out.resolve("model").toString();
    FeaturesJob.fitOnly(
        spark,
        JobInput.parquet(dir.resolve("train").toString()),
        20,
        options("features", "--fit-only", "--save-model", model),
        new JobSummary("features"));
    assertTrue(
        message("features", "--fit-only", "--save-model", model).contains("pass --overwrite"));
    options("features", "--fit-only", "--save-model", model, "--overwrite");
    Path mine = Files.createDirectories(out.resolve("mine"));
    Files.writeString(mine.resolve("notes.txt"), "keep me");
    String refused =
        message("features", "--fit-only", "--save-model", mine.toString(), "--overwrite");
    assertTrue(refused.contains("holds no saved model; it is not replaced"), refused);
    assertEquals("keep me", Files.readString(mine.resolve("notes.txt")));
    assertTrue(message("features", "--model", mine.toString()).contains("holds no saved model"));
    String input = dir.resolve("train").toString();
    String inside = message("features", "--input", input, "--save-model", input + "/m");
    assertTrue(inside.contains("--save-model"), inside);
    // Replacing the output would delete a model inside it, or around it.
    String o = out.resolve("o").toString();
    for (String[] pair : new String[][] {{o, o}, {o + "/model", o}, {o, o + "/features"}}) {
      String overlap = message("features", "--save-model", pair[0], "--output", pair[1]);
      assertTrue(overlap.contains("overlap, and replacing the output would delete"), overlap);
    }
  }

  @Test
  void aModelFolderWithoutItsDataBlamesModel(@TempDir Path out) throws Exception {
    String model = out.resolve("model").toString();
    FeaturesJob.fitOnly(
        spark,
        JobInput.parquet(dir.resolve("train").toString()),
        20,
        options("features", "--fit-only", "--save-model", model),
        new JobSummary("features"));
    org.apache.commons.io.FileUtils.deleteDirectory(out.resolve("model/data").toFile());
    assertEquals(
        "--model '"
            + model
            + "' holds a model's metadata but no data folder (its fitted statistics); give the"
            + " whole folder that --save-model wrote",
        message("features", "--model", model));
  }

  @Test
  void modelOptionsThatDoNotGoTogetherAreRefused() {
    assertTrue(message("features", "--fit-only").contains("--save-model DIR"));
    assertTrue(
        message("features", "--fit-only", "--save-model", "m", "--output", "o")
            .contains("drop --output"));
    assertTrue(
        message("features", "--model", "m", "--save-model", "n").contains("drop --save-model"));
    assertTrue(
        message("features", "--model", "m", "--vocabulary", "5").contains("drop --vocabulary"));
    assertTrue(message("etl", "--fit-only").contains("unknown option '--fit-only' for etl"));
  }
}
