package dev.overlap.features;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.evaluation.BinaryClassificationEvaluator;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.param.Params;
import org.apache.spark.ml.tuning.CrossValidatorModel;
import org.apache.spark.ml.tuning.ParamGridBuilder;
import org.apache.spark.ml.tuning.TrainValidationSplitModel;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The encoder's params as Spark ML's tuning uses them: {@code copy(ParamMap)} carries every one,
 * {@code explainParams} reads like Spark ML's, and a {@code ParamGridBuilder} over its own params
 * tunes it inside a {@code Pipeline} in {@code TrainValidationSplit} and {@code CrossValidator}.
 */
class FeatureParamsTest {
  static SparkSession spark;
  static Dataset<Row> train;

  @BeforeAll
  static void start() {
    spark = TestSessions.withPlugin("local[2]");
    train = FeatureVectorTest.rows(0, 1500, spark);
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  /** A value other than the default for each param, by name. */
  static Map<String, Object> others() {
    Map<String, Object> v = new TreeMap<>();
    v.put("inputCols", new String[] {"x", "city"});
    v.put("labelCol", "y");
    v.put("excludeCols", new String[] {"id"});
    v.put("vocabularySize", 2);
    v.put("handleInvalid", "skip");
    v.put("missingFeatures", "all");
    v.put("keepInputs", false);
    v.put("outputCol", "v");
    v.put("outputType", "array<float>");
    v.put("numberFeatures", new String[] {"std"});
    v.put("dateFeatures", new String[] {"month"});
    v.put("timestampFeatures", new String[] {"hour"});
    v.put("stringFeatures", new String[0]);
    v.put("imputeStrategy", "median");
    return v;
  }

  /** Every param of {@code stage} set in one map to {@link #others}' value; none left out. */
  static ParamMap allOthers(Params stage) {
    ParamMap extra = new ParamMap();
    for (Param<?> p : stage.params()) {
      assertTrue(others().containsKey(p.name()), "no test value for param " + p.name());
      @SuppressWarnings("unchecked")
      Param<Object> q = (Param<Object>) p;
      extra.put(q, others().get(p.name()));
    }
    return extra;
  }

  static void assertCarries(Params copy, ParamMap extra) {
    for (Param<?> p : copy.params()) {
      Object want = extra.apply(p);
      Object got = copy.getOrDefault(p);
      if (want instanceof String[] a) {
        assertArrayEquals(a, (String[]) got, p.name());
      } else {
        assertEquals(want, got, p.name());
      }
    }
  }

  @Test
  void copyCarriesEveryParam() {
    FeatureEncoder encoder = new FeatureEncoder().setVocabularySize(5);
    assertEquals(14, encoder.params().length);
    ParamMap extra = allOthers(encoder);
    FeatureEncoder copy = encoder.copy(extra);
    assertNotSame(encoder, copy);
    assertEquals(encoder.uid(), copy.uid());
    assertCarries(copy, extra);
    assertEquals(5, (int) encoder.copy(new ParamMap()).getOrDefault(encoder.vocabularySize()));

    FeatureEncoderModel model = new FeatureEncoder().fit(train);
    ParamMap modelExtra = allOthers(model);
    // The model carries every param, those fixed when fitted with the values it was fitted with.
    assertEquals(
        List.of(encoder.params()).stream().map(Param::name).toList(),
        List.of(model.params()).stream().map(Param::name).toList());
    assertCarries(model.copy(modelExtra), modelExtra);
    // And fit(dataset, paramMap), as the tuners call it, fits with them.
    FeatureEncoderModel fitted = encoder.fit(train, extra);
    assertEquals(
        List.of("x_std", "x_isnull", "x_imputed", "city_isnull", "city_imputed"),
        fitted.featureNames());
    assertEquals("v", fitted.getOrDefault(fitted.outputCol()));
  }

  @Test
  void explainParamsReadsLikeSparkMls() {
    FeatureEncoder encoder = new FeatureEncoder().setVocabularySize(5).setNumberFeatures("std");
    String[] lines = encoder.explainParams().split("\n");
    assertEquals(encoder.params().length, lines.length);
    List<String> names = new ArrayList<>();
    for (Param<?> p : encoder.params()) {
      names.add(p.name());
    }
    for (int i = 0; i < lines.length; i++) {
      assertTrue(lines[i].startsWith(names.get(i) + ": "), lines[i]);
    }
    assertTrue(
        List.of(lines)
            .contains(
                "vocabularySize: " + encoder.vocabularySize().doc() + " (default: 20, current: 5)"),
        encoder.explainParams());
    assertTrue(
        List.of(lines)
            .contains(
                "numberFeatures: "
                    + encoder.numberFeatures().doc()
                    + " (default: [std, log1p], current: [std])"),
        encoder.explainParams());
    assertTrue(
        List.of(lines)
            .contains("outputType: " + encoder.outputType().doc() + " (default: vector)"));
    String model = new FeatureEncoder().setOutputCol("v").fit(train).explainParams();
    assertTrue(model.contains("outputCol: one column holding the numeric features"), model);
    assertTrue(model.contains("(default: , current: v)"), model);
  }

  @Test
  void trainValidationSplitAndCrossValidatorTuneTheEncodersOwnParams(@TempDir Path dir)
      throws Exception {
    FeatureEncoder encoder =
        new FeatureEncoder().setInputCols("x", "city").setOutputCol("features");
    LogisticRegression lr = new LogisticRegression().setLabelCol("label").setMaxIter(20);
    Pipeline p = new Pipeline().setStages(new PipelineStage[] {encoder, lr});
    ParamMap[] grid =
        new ParamGridBuilder()
            .addGrid(encoder.vocabularySize(), new int[] {1, 4})
            .addGrid(
                encoder.handleInvalid(),
                scala.jdk.javaapi.CollectionConverters.asScala(List.of("keep", "skip")))
            .build();
    assertEquals(4, grid.length);
    BinaryClassificationEvaluator auc = new BinaryClassificationEvaluator().setLabelCol("label");
    TrainValidationSplitModel tvs =
        new org.apache.spark.ml.tuning.TrainValidationSplit()
            .setEstimator(p)
            .setEvaluator(auc)
            .setEstimatorParamMaps(grid)
            .setSeed(7)
            .fit(train);
    assertBestIsTheBestSetting(grid, tvs.validationMetrics(), (PipelineModel) tvs.bestModel());
    CrossValidatorModel cv =
        new org.apache.spark.ml.tuning.CrossValidator()
            .setEstimator(p)
            .setEvaluator(auc)
            .setEstimatorParamMaps(grid)
            .setNumFolds(2)
            .setSeed(7)
            .fit(train);
    assertBestIsTheBestSetting(grid, cv.avgMetrics(), (PipelineModel) cv.bestModel());
    // A vocabulary of one and one of four give the regression different features to learn from.
    assertTrue(
        cv.avgMetrics()[0] != cv.avgMetrics()[2], java.util.Arrays.toString(cv.avgMetrics()));
    // Saved and loaded, each tuning model scores new rows as the fitted one does.
    Dataset<Row> later = FeatureVectorTest.rows(1500, 500, spark);
    tvs.write().save(dir.resolve("tvs").toString());
    FeatureTransformTest.assertSameRows(
        tvs.transform(later).collectAsList(),
        TrainValidationSplitModel.load(dir.resolve("tvs").toString())
            .transform(later)
            .collectAsList());
    cv.write().save(dir.resolve("cv").toString());
    FeatureTransformTest.assertSameRows(
        cv.transform(later).collectAsList(),
        CrossValidatorModel.load(dir.resolve("cv").toString()).transform(later).collectAsList());
  }

  /** The best model's encoder was fitted with the params of the setting of the best metric. */
  static void assertBestIsTheBestSetting(ParamMap[] grid, double[] metrics, PipelineModel best) {
    assertEquals(grid.length, metrics.length);
    int at = 0;
    for (int i = 1; i < metrics.length; i++) {
      at = metrics[i] > metrics[at] ? i : at;
    }
    FeatureEncoderModel encoder = (FeatureEncoderModel) best.stages()[0];
    for (Param<?> param : encoder.params()) {
      if (grid[at].contains(param)) {
        assertEquals(grid[at].apply(param), encoder.getOrDefault(param), param.name());
      }
    }
    int size = (Integer) encoder.getOrDefault(encoder.vocabularySize());
    assertEquals(Math.min(size, 4), encoder.vocabulary("city").size());
  }
}
