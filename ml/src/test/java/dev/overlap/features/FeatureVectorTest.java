package dev.overlap.features;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.PipelineReport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.ml.attribute.AttributeGroup;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.feature.VectorAssembler;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code outputCol}: every numeric feature in one column, a dense vector with the features' names
 * as ML attributes, or an array of floats or doubles, in the model's saved order; a logistic
 * regression on it is the one trained on {@code VectorAssembler} over the same feature columns. On
 * the CPU path, as CI runs; the test tagged {@code gpu} compares the kernel's lists with it.
 */
class FeatureVectorTest {
  static SparkSession spark;
  static Dataset<Row> train;
  static Dataset<Row> test;

  @BeforeAll
  static void start() {
    spark = TestSessions.withPlugin("local[2]");
    train = rows(0, 2000, spark);
    test = rows(2000, 1000, spark);
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  /** A number with nulls, a city with nulls, a date with nulls, and a label of the number. */
  static Dataset<Row> rows(long from, long n, SparkSession spark) {
    return spark
        .range(from, from + n, 1, 4)
        .selectExpr(
            "id",
            "CASE WHEN id % 13 = 3 THEN NULL ELSE sin(id) * 10 + id % 7 END AS x",
            "CASE WHEN id % 17 = 5 THEN NULL"
                + " ELSE element_at(array('oslo', 'bern', 'rome', 'lima'), CAST(id % 4 + 1 AS INT))"
                + " END AS city",
            "CASE WHEN id % 19 = 2 THEN NULL ELSE date_add(DATE'2024-01-01', CAST(id % 97 AS INT))"
                + " END AS day",
            "IF(sin(id) * 10 + id % 7 + (id * 7919 % 101) / 12.0 > 8, 1.0, 0.0) AS label");
  }

  static FeatureEncoder encoder() {
    return new FeatureEncoder().setInputCols("x", "city", "day").setVocabularySize(3);
  }

  /** The rows without a missing day: a vector with NaN in it trains no regression. */
  static Dataset<Row> dated(Dataset<Row> d) {
    return d.where("day IS NOT NULL");
  }

  @Test
  void theVectorHoldsEveryNumericFeatureInTheModelsOrderAsVectorAssemblerWould() {
    FeatureEncoderModel model = encoder().setOutputCol("features").fit(train);
    List<String> numeric = new ArrayList<>(model.featureNames());
    // A string and a date; and x's imputed value, an affine function of x_std.
    numeric.removeAll(List.of("x_imputed", "city_imputed", "day_imputed"));
    assertEquals(numeric, model.vectorFeatures());
    Dataset<Row> ours = model.transform(test);
    List<String> kept = new ArrayList<>(List.of(test.columns()));
    kept.add("features");
    assertEquals(kept, List.of(ours.columns()));
    assertEquals(SQLDataTypes.VectorType(), ours.schema().apply("features").dataType());
    assertEquals(
        List.of(model.transformSchema(test.schema()).fields()), List.of(ours.schema().fields()));

    Dataset<Row> theirs = assembled(model, test, "features");
    AttributeGroup ourNames = AttributeGroup.fromStructField(ours.schema().apply("features"));
    AttributeGroup theirNames = AttributeGroup.fromStructField(theirs.schema().apply("features"));
    assertEquals(theirNames, ourNames);
    assertEquals(
        model.vectorFeatures(),
        List.of(ourNames.attributes().get()).stream().map(a -> a.name().get()).toList());
    List<Row> a = ours.select("features").collectAsList();
    List<Row> b = theirs.select("features").collectAsList();
    assertEquals(1000, a.size());
    int month = model.vectorFeatures().indexOf("day_month");
    int nan = 0;
    for (int i = 0; i < a.size(); i++) {
      double[] mine = ((Vector) a.get(i).get(0)).toArray();
      assertArrayEquals(((Vector) b.get(i).get(0)).toArray(), mine, 0.0, "row " + i);
      nan += Double.isNaN(mine[month]) ? 1 : 0;
    }
    // A missing day's parts are NaN, as VectorAssembler's keep gives them.
    assertEquals(test.where("day IS NULL").count(), nan);
  }

  /**
   * The model's feature columns assembled by Spark ML into {@code name}, after the inputs; the
   * indices as doubles with their nominal attributes, as StringIndexer gives them.
   */
  static Dataset<Row> assembled(FeatureEncoderModel model, Dataset<Row> in, String name) {
    FeatureEncoderModel columns =
        model.copy(new org.apache.spark.ml.param.ParamMap()).setOutputCol("");
    Dataset<Row> features = columns.transform(in);
    List<org.apache.spark.sql.Column> cols = new ArrayList<>();
    for (org.apache.spark.sql.types.StructField f : features.schema().fields()) {
      org.apache.spark.sql.Column c = features.col(f.name());
      cols.add(f.name().endsWith("_idx") ? c.cast("double").as(f.name(), f.metadata()) : c);
    }
    return new VectorAssembler()
        .setInputCols(model.vectorFeatures().toArray(new String[0]))
        .setOutputCol(name)
        .setHandleInvalid("keep")
        .transform(features.select(cols.toArray(new org.apache.spark.sql.Column[0])));
  }

  @Test
  void aRegressionOnTheVectorIsTheOneOnEncoderAndVectorAssembler() {
    FeatureEncoderModel model = encoder().setOutputCol("features").fit(train);
    LogisticRegression lr = new LogisticRegression().setLabelCol("label").setMaxIter(30);
    LogisticRegressionModel ours = lr.fit(model.transform(dated(train)));
    LogisticRegressionModel theirs = lr.fit(assembled(model, dated(train), "features"));
    assertEquals(model.vectorFeatures().size(), ours.coefficients().size());
    assertArrayEquals(theirs.coefficients().toArray(), ours.coefficients().toArray(), 1e-12);
    assertEquals(theirs.intercept(), ours.intercept(), 1e-12);
    assertTrue(ours.summary().accuracy() > 0.6, "accuracy " + ours.summary().accuracy());
  }

  @Test
  void theArraysAreTheVectorsValuesCast() {
    FeatureEncoderModel model = encoder().setOutputCol("v").fit(train);
    List<Row> vectors = model.transform(test).select("v").collectAsList();
    model.setOutputType("array<double>");
    Dataset<Row> doubles = model.transform(test);
    assertEquals(
        DataTypes.createArrayType(DataTypes.DoubleType, false),
        doubles.schema().apply("v").dataType());
    List<Row> d = doubles.select("v").collectAsList();
    model.setOutputType("array<float>");
    Dataset<Row> floats = model.transform(test);
    assertEquals(
        DataTypes.createArrayType(DataTypes.FloatType, false),
        floats.schema().apply("v").dataType());
    List<Row> f = floats.select("v").collectAsList();
    for (int i = 0; i < vectors.size(); i++) {
      double[] want = ((Vector) vectors.get(i).get(0)).toArray();
      List<Double> gotD = d.get(i).getList(0);
      List<Float> gotF = f.get(i).getList(0);
      assertEquals(want.length, gotD.size());
      for (int k = 0; k < want.length; k++) {
        assertEquals(
            Double.doubleToLongBits(want[k]), Double.doubleToLongBits(gotD.get(k)), "row " + i);
        assertEquals(
            Float.floatToIntBits((float) want[k]), Float.floatToIntBits(gotF.get(k)), "row " + i);
      }
    }
  }

  @Test
  void theOrderIsSavedWithTheModelAndCheckedWhenLoaded(@TempDir Path dir) throws Exception {
    FeatureEncoderModel model = encoder().setOutputCol("features").fit(train);
    String path = dir.resolve("model").toString();
    model.write().save(path);
    FeatureEncoderModel loaded = FeatureEncoderModel.load(path);
    assertEquals(model.vectorFeatures(), loaded.vectorFeatures());
    assertEquals("features", loaded.getOrDefault(loaded.outputCol()));
    FeatureTransformTest.assertSameRows(
        model.transform(test).collectAsList(), loaded.transform(test).collectAsList());
    // A model whose saved order is not the one this release makes is refused, naming both.
    Path meta;
    try (var files = Files.list(dir.resolve("model").resolve("metadata"))) {
      meta = files.filter(p -> p.getFileName().toString().startsWith("part-")).findFirst().get();
    }
    String json = Files.readString(meta);
    assertTrue(json.contains("\"vectorFeatures\":[\"x_std\","), json);
    Files.writeString(
        meta,
        json.replace(
            "\"vectorFeatures\":[\"x_std\",", "\"vectorFeatures\":[\"x_isnull\",\"x_std\","));
    Files.deleteIfExists(meta.resolveSibling("." + meta.getFileName() + ".crc"));
    Exception e =
        assertThrows(IllegalArgumentException.class, () -> FeatureEncoderModel.load(path));
    assertTrue(
        e.getMessage().contains("orders its outputCol's features [x_isnull, x_std,"),
        e.getMessage());
  }

  @Test
  void theVectorHoldsEachInputOnceAndAModelOfFormat3KeepsItsOrder(@TempDir Path dir)
      throws Exception {
    FeatureEncoderModel model = encoder().setOutputCol("features").fit(train);
    assertEquals(
        List.of(
            "x_std", "x_isnull", "city_idx", "city_isnull", "day_dow", "day_month", "day_isnull"),
        model.vectorFeatures());
    // Every feature stays a column of its own without outputCol.
    FeatureEncoderModel columns = model.copy(new org.apache.spark.ml.param.ParamMap());
    List<String> out = List.of(columns.setOutputCol("").transform(test).columns());
    assertTrue(out.containsAll(List.of("x_std", "x_isnull", "x_imputed")), out.toString());
    // A model saved in format 3, whose vector held x_imputed too, loads with that order.
    String path = dir.resolve("model").toString();
    model.write().save(path);
    Path meta;
    try (var files = Files.list(dir.resolve("model").resolve("metadata"))) {
      meta = files.filter(p -> p.getFileName().toString().startsWith("part-")).findFirst().get();
    }
    String json = Files.readString(meta);
    assertTrue(json.contains("\"format\":4"), json);
    Files.writeString(
        meta,
        json.replace("\"format\":4", "\"format\":3")
            .replace("\"x_isnull\",\"city_idx\"", "\"x_isnull\",\"x_imputed\",\"city_idx\""));
    Files.deleteIfExists(meta.resolveSibling("." + meta.getFileName() + ".crc"));
    FeatureEncoderModel old = FeatureEncoderModel.load(path);
    assertEquals(2, old.vectorFeatures().indexOf("x_imputed"));
    Dataset<Row> oldOut = old.transform(test);
    assertEquals(
        model.vectorFeatures().size() + 1,
        ((Vector) oldOut.select("features").first().get(0)).size());
  }

  @Test
  void withoutKeepInputsTheEncodedColumnsGoAndANameTakenIsRefused() {
    FeatureEncoderModel model = encoder().setOutputCol("v").setKeepInputs(false).fit(train);
    assertEquals(List.of("v", "id", "label"), List.of(model.transform(test).columns()));
    model.setKeepInputs(true).setOutputCol("City");
    Exception e = assertThrows(FeatureInputException.class, () -> model.transform(test));
    assertEquals(
        "outputCol 'City' is the name of an input column the output keeps; choose another name",
        e.getMessage());
  }

  @Test
  @Tag("gpu")
  void onTheGpuTheKernelsListsAreTheCpuImplementations() {
    assertTrue(GpuStatus.current().gpu(), "no GPU: " + GpuStatus.current().reason());
    FeatureEncoderModel model = encoder().fit(train);
    for (String type : List.of("array<float>", "array<double>", "vector")) {
      model.setOutputCol("v").setOutputType(type);
      PipelineReport report = PipelineReport.create(spark);
      List<Row> gpu = model.transformWithReport(test, report).select("v").collectAsList();
      assertTrue(report.gpuTasks() > 0, "no task ran on the GPU");
      assertEquals(0, report.cpuTasks(), "tasks ran on the CPU");
      FeaturePlan plan = model.plan.forInput(test.schema());
      plan.layout = FeatureLayout.of(test.schema(), plan, true, "v", type);
      List<List<String>> kinds = CpuFeatures.kindFeatures(plan);
      List<Row> in = test.collectAsList(); // one read, in partition order, as the GPU's
      int listAt = test.columns().length;
      for (int i = 0; i < in.size(); i++) {
        @SuppressWarnings("unchecked")
        List<Object> want = (List<Object>) CpuFeatures.row(plan, kinds, in.get(i)).get(listAt);
        Object got = gpu.get(i).get(0);
        List<?> values =
            got instanceof Vector v
                ? java.util.Arrays.stream(v.toArray()).boxed().toList()
                : gpu.get(i).getList(0);
        assertEquals(want.size(), values.size(), type + " row " + i);
        for (int k = 0; k < want.size(); k++) {
          double w = ((Number) want.get(k)).doubleValue();
          double g = ((Number) values.get(k)).doubleValue();
          if (Double.isNaN(w)) { // a missing day's parts
            assertTrue(Double.isNaN(g), type + " row " + i + " slot " + k + ": " + g);
            continue;
          }
          assertEquals(
              w,
              g,
              (type.equals("array<float>") ? 1e-6 : 1e-12) * Math.max(1, Math.abs(w)),
              type + " row " + i + " slot " + k);
        }
      }
    }
  }
}
