package dev.overlap.features;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.PipelineReport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.feature.Imputer;
import org.apache.spark.ml.feature.StandardScaler;
import org.apache.spark.ml.feature.StringIndexer;
import org.apache.spark.ml.feature.StringIndexerModel;
import org.apache.spark.ml.feature.VectorAssembler;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link FeatureEncoder} against Spark ML's own estimators on the same data, on real Parquet files:
 * z-scores equal {@code StandardScaler}'s, indices {@code StringIndexer}'s, imputed numbers {@code
 * Imputer}'s; a model fitted on one input and applied to another keeps the first one's statistics
 * and output columns; saved and loaded alone and inside a {@code PipelineModel}; what it cannot
 * apply is refused in one line. Without a GPU the CPU implementation runs; the test tagged {@code
 * gpu} runs the kernels and fails, rather than skips, without one.
 */
class FeatureEncoderTest {
  static final String[] CITIES = {"oslo", "bern", "rome", "bern", "lima", "oslo", "kiev"};
  static SparkSession spark;
  @TempDir static Path dir;
  static Dataset<Row> train;
  static Dataset<Row> test;

  @BeforeAll
  static void start() {
    spark = TestSessions.withPlugin("local[2]");
    train = parquet("train", 0, 400, 10.0);
    test = parquet("test", 400, 300, 100.0);
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  /**
   * Rows {@code from} … {@code from + n - 1}: an id (passed through), a number around {@code
   * center} with no missing value, one with nulls and NaN, a city (three of them tie in the
   * training data; quito occurs only in the test data) and a label.
   */
  private static Dataset<Row> parquet(String name, int from, int n, double center) {
    StructType schema =
        new StructType()
            .add("id", DataTypes.LongType, false)
            .add("a", DataTypes.DoubleType, false)
            .add("b", DataTypes.DoubleType, true)
            .add("city", DataTypes.StringType, true)
            .add("label", DataTypes.DoubleType, false);
    List<Row> rows = new ArrayList<>();
    for (int i = from; i < from + n; i++) {
      Double b = i % 11 == 3 ? null : i % 13 == 5 ? Double.NaN : (i % 17) * 0.75;
      String city = i % 19 == 7 ? null : from > 0 && i % 5 == 0 ? "quito" : CITIES[i % 7];
      double a = center + (i % 23) * 1.5 - (i % 7);
      rows.add(RowFactory.create((long) i, a, b, city, a > center + 10 ? 1.0 : 0.0));
    }
    String path = dir.resolve(name).toString();
    spark.createDataFrame(rows, schema).repartition(3).write().parquet(path);
    return spark.read().parquet(path);
  }

  private static FeatureEncoder encoder() {
    return new FeatureEncoder().setInputCols("a", "b", "city").setVocabularySize(10);
  }

  private static Map<Long, Row> byId(Dataset<Row> d) {
    Map<Long, Row> out = new HashMap<>();
    for (Row r : d.collectAsList()) {
      out.put(r.<Long>getAs("id"), r);
    }
    return out;
  }

  @Test
  void zScoresEqualStandardScalersWithMeanAndDeviation() {
    Map<Long, Row> ours = byId(encoder().fit(train).transform(train));
    Dataset<Row> vectors =
        new VectorAssembler().setInputCols(new String[] {"a"}).setOutputCol("v").transform(train);
    Dataset<Row> scaled =
        new StandardScaler()
            .setInputCol("v")
            .setOutputCol("z")
            .setWithMean(true)
            .setWithStd(true)
            .fit(vectors)
            .transform(vectors);
    assertEquals(400, ours.size());
    for (Row r : scaled.collectAsList()) {
      double want = r.<Vector>getAs("z").apply(0);
      double got = ours.get(r.<Long>getAs("id")).<Double>getAs("a_std");
      assertEquals(want, got, 1e-12, "a_std of id " + r.getAs("id"));
    }
  }

  @Test
  void indicesEqualStringIndexersByFrequencyTiesByValue() {
    FeatureEncoderModel model = encoder().fit(train);
    StringIndexerModel indexer =
        new StringIndexer()
            .setInputCol("city")
            .setOutputCol("i")
            .setStringOrderType("frequencyDesc")
            .setHandleInvalid("keep")
            .fit(train);
    // rome, lima and kiev occur equally often (54 times each): both break the tie by value.
    assertEquals(List.of(indexer.labelsArray()[0]), model.vocabulary("city"));
    assertEquals(List.of("oslo", "bern", "kiev", "lima", "rome"), model.vocabulary("city"));
    // The counts kept with the vocabulary are Spark's count of each value.
    List<Long> counts = new java.util.ArrayList<>();
    for (String v : model.vocabulary("city")) {
      counts.add(train.where(org.apache.spark.sql.functions.col("city").equalTo(v)).count());
    }
    assertEquals(counts, model.vocabularyCounts("city"));
    assertEquals(54L, counts.get(4));
    Map<Long, Row> ours = byId(model.transform(train));
    for (Row r : indexer.transform(train).where("city is not null").collectAsList()) {
      int got = ours.get(r.<Long>getAs("id")).<Integer>getAs("city_idx");
      assertEquals((int) r.getDouble(r.fieldIndex("i")), got, "city_idx of id " + r.getAs("id"));
    }
  }

  @Test
  void imputedNumbersEqualImputersMean() {
    FeatureEncoderModel model = encoder().fit(train);
    Map<Long, Row> ours = byId(model.transform(train));
    Dataset<Row> imputed =
        new Imputer()
            .setInputCols(new String[] {"b"})
            .setOutputCols(new String[] {"b_out"})
            .setStrategy("mean")
            .fit(train)
            .transform(train);
    int missing = 0;
    for (Row r : imputed.collectAsList()) {
      Row o = ours.get(r.<Long>getAs("id"));
      assertEquals(r.getDouble(r.fieldIndex("b_out")), o.<Double>getAs("b_imputed"), 1e-12);
      missing += o.<Boolean>getAs("b_isnull") ? 1 : 0;
    }
    assertEquals(model.missing("b"), missing);
    assertTrue(missing > 0);
  }

  @Test
  void aModelFittedOnOneInputAppliesItsStatisticsToAnother() {
    FeatureEncoderModel model = encoder().fit(train);
    double mean = model.mean("a");
    double std = model.std("a");
    List<String> vocabulary = model.vocabulary("city");
    Map<Long, Row> out = byId(model.transform(test));
    assertEquals(300, out.size());
    // The test data's own mean is about 90 higher: a refitted model would give z near 0.
    for (Row r : test.collectAsList()) {
      Row o = out.get(r.<Long>getAs("id"));
      assertEquals((r.<Double>getAs("a") - mean) / std, o.<Double>getAs("a_std"), 1e-12);
      String city = r.getAs("city");
      int want =
          city == null || !vocabulary.contains(city) ? vocabulary.size() : vocabulary.indexOf(city);
      assertEquals(want, o.<Integer>getAs("city_idx"), "city " + city);
    }
    assertFalse(vocabulary.contains("quito"), "quito is only in the test data");
  }

  @Test
  void theOutputColumnsAreFixedWhenFitted() {
    FeatureEncoderModel model = encoder().fit(train);
    // a had no missing value when fitted: no a_isnull, whatever comes later; b had some.
    assertEquals(List.of("a_std", "a_log1p"), model.features("a"));
    assertEquals(List.of("b_std", "b_log1p", "b_isnull", "b_imputed"), model.features("b"));
    Dataset<Row> noNulls = test.where("b is not null and not isnan(b) and city is not null");
    Dataset<Row> withNullA = test.selectExpr("id", "if(id % 2 = 0, null, a) as a", "b", "city");
    List<String> columns = List.of(model.transform(train).columns());
    assertEquals(columns, List.of(model.transform(noNulls).columns()));
    int made =
        model.features("a").size() + model.features("b").size() + model.features("city").size();
    // The features come after the input's columns, as Spark ML's transformers put them.
    List<String> nullA = List.of(model.transform(withNullA).columns());
    assertEquals(List.of(withNullA.columns()), nullA.subList(0, nullA.size() - made));
    assertEquals(
        columns.subList(columns.size() - made, columns.size()),
        nullA.subList(nullA.size() - made, nullA.size()));
    assertEquals(
        List.of(model.transformSchema(train.schema()).fieldNames()),
        List.of(model.transform(train).columns()));
    for (Row r : model.transform(withNullA).where("id % 2 = 0").collectAsList()) {
      assertEquals(0.0, r.<Double>getAs("a_std"), 0.0, "a missing value is imputed by the mean");
    }
  }

  @Test
  void savedAndLoadedItTransformsAlike(@TempDir Path out) throws IOException {
    FeatureEncoderModel model = encoder().setHandleInvalid("skip").fit(train);
    String path = out.resolve("model").toString();
    model.write().save(path);
    FeatureEncoderModel loaded = FeatureEncoderModel.load(path);
    assertEquals(model.uid(), loaded.uid());
    assertEquals("skip", loaded.getOrDefault(loaded.handleInvalid()));
    assertEquals(10, loaded.getOrDefault(loaded.vocabularySize()));
    assertEquals(model.fittedRows(), loaded.fittedRows());
    assertEquals(model.vocabularyCounts("city"), loaded.vocabularyCounts("city"));
    assertEquals(model.vocabulary("city").size(), loaded.vocabularyCounts("city").size());
    assertEquals(
        model.transform(test).orderBy("id").collectAsList(),
        loaded.transform(test).orderBy("id").collectAsList());
    // A second save needs overwrite; a folder that is no model is never replaced.
    assertThrows(IOException.class, () -> model.write().save(path));
    // Overwritten by a model fitted differently: the new one is there, nothing else beside it.
    FeatureEncoderModel smaller = encoder().setVocabularySize(2).fit(train);
    smaller.write().overwrite().save(path);
    assertEquals(List.of("oslo", "bern"), FeatureEncoderModel.load(path).vocabulary("city"));
    try (java.util.stream.Stream<Path> beside = Files.list(out)) {
      assertEquals(List.of(out.resolve("model")), beside.toList(), "left beside the model");
    }
    // A save killed between its renames left the model aside: the next save puts it back first.
    Path aside = out.resolve(".model.overlap-previous-killed");
    Files.move(out.resolve("model"), aside);
    assertThrows(IOException.class, () -> model.write().save(path));
    assertEquals(List.of("oslo", "bern"), FeatureEncoderModel.load(path).vocabulary("city"));
    assertFalse(Files.exists(aside));
    Path mine = Files.createDirectories(out.resolve("mine"));
    Files.writeString(mine.resolve("notes.txt"), "keep me");
    IOException e =
        assertThrows(IOException.class, () -> model.write().overwrite().save(mine.toString()));
    assertTrue(e.getMessage().contains("not a saved model"), e.getMessage());
    assertEquals("keep me", Files.readString(mine.resolve("notes.txt")));
    // The estimator saves its params too.
    encoder().write().save(out.resolve("encoder").toString());
    FeatureEncoder again = FeatureEncoder.load(out.resolve("encoder").toString());
    assertEquals(List.of("a", "b", "city"), List.of(again.getOrDefault(again.inputCols())));
  }

  @Test
  void aStageOfAPipelineBesideSparksOwn(@TempDir Path out) throws IOException {
    Pipeline pipeline =
        new Pipeline()
            .setStages(
                new PipelineStage[] {
                  encoder(),
                  new VectorAssembler()
                      .setInputCols(new String[] {"a_std", "b_std", "b_isnull", "city_idx"})
                      .setOutputCol("features"),
                  new LogisticRegression().setMaxIter(20)
                });
    PipelineModel fitted = pipeline.fit(train);
    String path = out.resolve("pipeline").toString();
    fitted.write().save(path);
    PipelineModel loaded = PipelineModel.load(path);
    assertEquals(
        fitted.transform(test).select("id", "prediction").orderBy("id").collectAsList(),
        loaded.transform(test).select("id", "prediction").orderBy("id").collectAsList());
    Pipeline pipelineAgain = Pipeline.load(saved(pipeline, out.resolve("unfitted")));
    assertEquals(3, pipelineAgain.getStages().length);
  }

  private static String saved(Pipeline p, Path where) throws IOException {
    p.write().save(where.toString());
    return where.toString();
  }

  @Test
  void whatItCannotApplyIsRefusedInOneLine() {
    FeatureEncoderModel model = encoder().fit(train);
    FeatureInputException lacking =
        assertThrows(FeatureInputException.class, () -> model.transform(test.drop("city")));
    assertTrue(lacking.getMessage().contains("no column 'city'"), lacking.getMessage());
    assertTrue(lacking.getMessage().contains("string"), lacking.getMessage());
    FeatureInputException typed =
        assertThrows(
            FeatureInputException.class,
            () -> model.transform(test.selectExpr("id", "cast(a as string) as a", "b", "city")));
    assertTrue(typed.getMessage().contains("'a' is string here, but a number"), typed.getMessage());
    assertFalse(typed.getMessage().contains("\n"));
    // Outside the vocabulary: skip drops the row, error fails naming the column and value.
    long quito = test.where("city = 'quito'").count();
    assertTrue(quito > 0);
    assertEquals(
        test.count() - quito,
        model
            .copy(new org.apache.spark.ml.param.ParamMap())
            .setHandleInvalid("skip")
            .transform(test)
            .count());
    Exception e =
        assertThrows(
            Exception.class, () -> model.setHandleInvalid("error").transform(test).count());
    String all = "";
    for (Throwable t = e; t != null; t = t.getCause()) {
      all += t + "\n";
    }
    assertTrue(all.contains("column 'city' holds 'quito'"), all);
    model.setHandleInvalid("keep");
  }

  @Test
  @Tag("gpu")
  void onTheGpuTheModelGivesTheCpuImplementationsValues() {
    assertTrue(GpuStatus.current().gpu(), "no GPU: " + GpuStatus.current().reason());
    PipelineReport first = PipelineReport.create(spark);
    FeatureEncoderModel model = encoder().fitWithReports(train, first, first);
    assertTrue(model.fittedByKernels());
    assertTrue(first.gpuTasks() > 0, "the first pass ran no task on the GPU");
    // The kernels' vocabulary and counts: Spark's count of each value.
    for (int i = 0; i < model.vocabulary("city").size(); i++) {
      String v = model.vocabulary("city").get(i);
      assertEquals(
          train.where(org.apache.spark.sql.functions.col("city").equalTo(v)).count(),
          model.vocabularyCounts("city").get(i),
          "count of " + v);
    }
    PipelineReport report = PipelineReport.create(spark);
    // The features first, as the CPU implementation's rows below hold them; id after them.
    Map<Long, Row> gpu = byId(model.setKeepInputs(false).transformWithReport(test, report));
    assertTrue(report.gpuTasks() > 0, "no task ran on the GPU");
    assertEquals(0, report.cpuTasks(), "tasks ran on the CPU");
    FeaturePlan plan = model.plan.forInput(test.select("a", "b", "city").schema());
    List<List<String>> kinds = CpuFeatures.kindFeatures(plan);
    for (Row r : test.collectAsList()) {
      Row want = CpuFeatures.row(plan, kinds, RowFactory.create(r.get(1), r.get(2), r.get(3)));
      Row got = gpu.get(r.<Long>getAs("id"));
      for (int k = 0; k < want.length(); k++) {
        Object w = want.get(k);
        Object g = got.get(k);
        if (w instanceof Double d) {
          assertEquals(d, (Double) g, 1e-12 * Math.max(1, Math.abs(d)), "column " + k);
        } else {
          assertEquals(w, g, "column " + k + " of id " + r.getAs("id"));
        }
      }
    }
    assertNotEquals(0, gpu.size());
  }
}
