package dev.overlap.jobs.features;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.jobs.TestSessions;
import dev.overlap.jobs.cli.JobArgs;
import dev.overlap.jobs.cli.JobSummary;
import dev.overlap.jobs.cli.UsageException;
import dev.overlap.jobs.delta.JobInput;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the features job writes, on real Parquet: the features alone by default; every input column
 * first with {@code --keep-inputs}; one vector or array column with {@code --vector-col}; the
 * options that do not go together refused before any work.
 */
class FeaturesOutputTest {
  static SparkSession spark;
  @TempDir static Path dir;
  static String input;

  @BeforeAll
  static void start() {
    spark = TestSessions.local("local[2]");
    input = dir.resolve("in").toString();
    spark
        .sql("select id, id * 2.0 as x, cast(id % 3 as string) as s from range(300)")
        .write()
        .parquet(input);
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  static Dataset<Row> run(String out, String... args) {
    String[] all = new String[args.length + 1];
    all[0] = "features";
    System.arraycopy(args, 0, all, 1, args.length);
    OutputOptions options = OutputOptions.check(JobArgs.parse(all));
    String to = dir.resolve(out).toString();
    FeaturesJob.run(
        spark,
        JobInput.parquet(input),
        to,
        20,
        ModelOptions.NONE,
        options,
        new JobSummary("features"));
    return spark.read().parquet(to);
  }

  @Test
  void theFeaturesAloneByDefaultAndTheInputsFirstWithKeepInputs() {
    List<String> features = List.of("id_std", "id_log1p", "x_std", "x_log1p", "s_idx");
    assertEquals(features, List.of(run("plain").columns()));
    Dataset<Row> kept = run("kept", "--keep-inputs");
    assertEquals(
        List.of("id", "x", "s", "id_std", "id_log1p", "x_std", "x_log1p", "s_idx"),
        List.of(kept.columns()));
    assertEquals(0, kept.select("id", "x", "s").except(spark.read().parquet(input)).count());
    assertEquals(300, kept.count());
  }

  @Test
  void oneVectorOrArrayColumnWithVectorCol() {
    Dataset<Row> vector = run("vector", "--vector-col", "features");
    assertEquals(List.of("features"), List.of(vector.columns()));
    assertEquals(SQLDataTypes.VectorType(), vector.schema().apply("features").dataType());
    Dataset<Row> floats =
        run("floats", "--vector-col", "v", "--vector-type", "array<float>", "--keep-inputs");
    assertEquals(List.of("id", "x", "s", "v"), List.of(floats.columns()));
    // Parquet keeps the element type; its elements read back as nullable, as every column does.
    assertEquals(
        DataTypes.createArrayType(DataTypes.FloatType, true),
        floats.schema().apply("v").dataType());
    Row r = floats.where("id = 7").first();
    // id 7 of 0..299: s = "1", the vocabulary's second value (300 rows, 100 each, ties by value).
    assertEquals(5, r.getList(3).size());
    assertEquals(1.0f, (Float) r.getList(3).get(4));
  }

  /** How many Spark jobs {@code work} starts. */
  static int jobs(Runnable work) throws Exception {
    int[] started = {0};
    org.apache.spark.scheduler.SparkListener counter =
        new org.apache.spark.scheduler.SparkListener() {
          @Override
          public void onJobStart(org.apache.spark.scheduler.SparkListenerJobStart start) {
            started[0]++;
          }
        };
    spark.sparkContext().listenerBus().waitUntilEmpty(10_000);
    spark.sparkContext().addSparkListener(counter);
    try {
      work.run();
    } catch (UsageException e) {
      // counted all the same
    } finally {
      spark.sparkContext().listenerBus().waitUntilEmpty(10_000);
      spark.sparkContext().removeSparkListener(counter);
    }
    return started[0];
  }

  @Test
  void aVectorColNamedLikeAKeptColumnIsRefusedNamingTheOptionBeforeAnyWork() throws Exception {
    UsageException kept =
        assertThrows(
            UsageException.class, () -> run("clash", "--vector-col", "X", "--keep-inputs"));
    assertEquals(
        "--vector-col 'X' is the name of input column 'x', which the output keeps (--keep-inputs):"
            + " choose another name for --vector-col",
        kept.getMessage());
    // No more jobs than reading the input's schema takes: no first pass.
    int reading = jobs(() -> spark.read().parquet(input).schema());
    int refused = jobs(() -> run("clash2", "--vector-col", "x", "--keep-inputs"));
    assertEquals(reading, refused);
    // A column the encoder does not encode is kept without --keep-inputs too.
    String flags = dir.resolve("flags").toString();
    spark.sql("select id * 1.5 as x, id % 2 = 0 as flag from range(50)").write().parquet(flags);
    UsageException passed =
        assertThrows(
            UsageException.class,
            () ->
                FeaturesJob.run(
                    spark,
                    JobInput.parquet(flags),
                    dir.resolve("flags-out").toString(),
                    20,
                    ModelOptions.NONE,
                    OutputOptions.check(JobArgs.parse("features", "--vector-col", "flag")),
                    new JobSummary("features")));
    assertEquals(
        "--vector-col 'flag' is the name of input column 'flag', which the output keeps (the"
            + " encoder does not encode it): choose another name for --vector-col",
        passed.getMessage());
  }

  @Test
  void theSummaryNamesTheFeaturesTheVectorDoesNotHold() {
    String gaps = dir.resolve("gaps").toString();
    spark
        .sql(
            "select if(id % 7 = 0, null, id * 1.5) as x,"
                + " if(id % 5 = 0, null, cast(id % 3 as string)) as s,"
                + " if(id % 4 = 0, null, date_add(date'2024-01-01', cast(id as int))) as d"
                + " from range(100)")
        .write()
        .parquet(gaps);
    JobSummary summary = new JobSummary("features");
    FeaturesJob.run(
        spark,
        JobInput.parquet(gaps),
        dir.resolve("gaps-out").toString(),
        20,
        ModelOptions.NONE,
        OutputOptions.check(JobArgs.parse("features", "--vector-col", "v")),
        summary);
    String text = summary.render(100, 2);
    assertTrue(
        text.contains(
            "--vector-col 'v' holds 8 of the 11 features; not in it: x_imputed, s_imputed,"
                + " d_imputed (imputed strings, dates and timestamps, which a vector cannot hold,"
                + " and imputed numbers, whose _std it holds); without --vector-col each is a"
                + " column"),
        text);
    assertTrue(text.contains("3 columns (x, s, d) into 11 features"), text);
  }

  @Test
  void optionsThatDoNotGoTogetherAreRefused() {
    assertEquals(
        "--vector-type is the type of --vector-col's column: give --vector-col NAME too",
        message("features", "--vector-type", "array<float>"));
    assertEquals(
        "--vector-type must be vector, array<float>, array<double>, got 'array<int>'",
        message("features", "--vector-col", "v", "--vector-type", "array<int>"));
    assertEquals(
        "--fit-only writes no features: drop --keep-inputs, --vector-col and --vector-type",
        message("features", "--fit-only", "--save-model", "m", "--keep-inputs"));
  }

  private static String message(String... args) {
    return assertThrows(UsageException.class, () -> OutputOptions.check(JobArgs.parse(args)))
        .getMessage();
  }
}
