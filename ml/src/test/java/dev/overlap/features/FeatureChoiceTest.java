package dev.overlap.features;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.PipelineReport;
import java.nio.file.Path;
import java.sql.Date;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which features each kind gets ({@code numberFeatures}, {@code dateFeatures}, {@code
 * timestampFeatures}, {@code stringFeatures}): only those, with the values the default set gives
 * them, kept by a saved model; a name outside a kind's features refused; an input column named like
 * a feature refused in one line. The test tagged {@code gpu} runs the kernels on the GPU.
 */
class FeatureChoiceTest {
  static SparkSession spark;
  @TempDir static Path dir;
  static Dataset<Row> data;

  @BeforeAll
  static void start() {
    spark = TestSessions.withPlugin("local[2]");
    StructType schema =
        new StructType()
            .add("n", DataTypes.DoubleType, true)
            .add("d", DataTypes.DateType, true)
            .add("t", DataTypes.TimestampType, true)
            .add("s", DataTypes.StringType, true);
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      rows.add(
          RowFactory.create(
              i % 17 == 4 ? null : (i % 29) * 1.25,
              i % 13 == 2 ? null : Date.valueOf(java.time.LocalDate.of(2024, 1, 1).plusDays(i)),
              i % 11 == 6 ? null : new Timestamp(1_700_000_000_000L + i * 3_599_000L),
              i % 7 == 0 ? null : "v" + i % 5));
    }
    String path = dir.resolve("data").toString();
    spark.createDataFrame(rows, schema).repartition(3).write().parquet(path);
    data = spark.read().parquet(path);
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  private static FeatureEncoder chosen() {
    return new FeatureEncoder()
        .setNumberFeatures("log1p")
        .setDateFeatures("month")
        .setTimestampFeatures("hour", "dow")
        .setStringFeatures();
  }

  @Test
  void onlyTheChosenFeaturesAreMadeWithTheDefaultSetsValues() throws Exception {
    FeatureEncoderModel all = new FeatureEncoder().fit(data);
    FeatureEncoderModel some = chosen().fit(data);
    List<String> want =
        List.of(
            "n_log1p",
            "n_isnull",
            "n_imputed",
            "d_month",
            "d_isnull",
            "d_imputed",
            "t_hour",
            "t_dow",
            "t_isnull",
            "t_imputed",
            "s_isnull",
            "s_imputed");
    // Every input column kept, the features after them, as Spark ML's transformers do.
    List<String> kept = new java.util.ArrayList<>(List.of(data.columns()));
    kept.addAll(want);
    Dataset<Row> out = some.transform(data);
    assertEquals(kept, List.of(out.columns()));
    assertEquals(kept, List.of(some.transformSchema(data.schema()).fieldNames()));
    assertEquals(List.of("n_log1p", "n_isnull", "n_imputed"), some.features("n"));
    // The same values as the default set's columns of the same names, row for row.
    Dataset<Row> full = all.transform(data).select(cols(want));
    assertEquals(300, out.count());
    Dataset<Row> features = out.select(cols(want));
    assertEquals(0, features.except(full).count() + full.except(features).count());
    // Kept by a saved model, and refused when it is no feature of the kind.
    String path = dir.resolve("model").toString();
    some.write().save(path);
    assertEquals(kept, List.of(FeatureEncoderModel.load(path).transform(data).columns()));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> chosen().setNumberFeatures("zscore"));
    assertTrue(e.getMessage().contains("numberFeatures"), e.getMessage());
    // The estimator's own choice round-trips too.
    chosen().write().save(dir.resolve("estimator").toString());
    FeatureEncoder loaded = FeatureEncoder.load(dir.resolve("estimator").toString());
    assertEquals(List.of("hour", "dow"), List.of(loaded.getOrDefault(loaded.timestampFeatures())));
  }

  @Test
  void anInputColumnNamedLikeAFeatureIsRefusedInOneLine() {
    FeatureEncoderModel model = new FeatureEncoder().setInputCols("n").fit(data);
    Dataset<Row> clash = data.withColumn("N_STD", functions.lit(1));
    FeatureInputException e =
        assertThrows(FeatureInputException.class, () -> model.transform(clash));
    assertEquals(
        "column 'N_STD' of the input has the name of one of the model's features; rename or drop"
            + " it (a model fitted on an input with that column names its feature otherwise)",
        e.getMessage());
    // Fitted on an input that has it, the feature takes a free name instead.
    FeatureEncoderModel beside = new FeatureEncoder().setInputCols("n").fit(clash);
    assertEquals(List.of("n_std_2", "n_log1p", "n_isnull", "n_imputed"), beside.features("n"));
    assertEquals(300, beside.transform(clash).count());
  }

  @Test
  void noFeatureAtAllIsRefusedAndNoIndexMeansNoInvalidString() {
    // s has nulls, so it still gets _isnull and _imputed; without them nothing would be made.
    Dataset<Row> present = data.where("s is not null").select("s");
    FeatureInputException e =
        assertThrows(
            FeatureInputException.class,
            () -> new FeatureEncoder().setStringFeatures().fit(present));
    assertTrue(
        e.getMessage().startsWith("the encoder would make no feature of s: "), e.getMessage());
    // A string that gets no index is never outside the vocabulary: skip keeps every row.
    FeatureEncoderModel noIndex =
        new FeatureEncoder()
            .setInputCols("s")
            .setStringFeatures()
            .setMissingFeatures("all")
            .setVocabularySize(1)
            .fit(data);
    noIndex.setHandleInvalid("skip");
    Dataset<Row> strings = data.select("s");
    assertEquals(
        List.of("s", "s_isnull", "s_imputed"), List.of(noIndex.transform(strings).columns()));
    // Five values, a vocabulary of one: four of them would be outside it.
    assertEquals(300, noIndex.transform(strings).count());
  }

  @Test
  void anInputOfNoTypeItEncodesIsRefusedNamingItsColumnsAndTypes() {
    Dataset<Row> nested =
        spark
            .range(10)
            .selectExpr(
                "array(id, id + 1) AS tags",
                "named_struct('a', id, 'b', CAST(id AS STRING)) AS pair",
                "CAST(CAST(id AS STRING) AS BINARY) AS blob");
    String want =
        "no column of the input gets a feature: tags (array<bigint>), pair"
            + " (struct<a:bigint,b:string>), blob (binary) are of types the encoder does not"
            + " encode; it encodes numbers (tinyint to double, and decimal), date, timestamp,"
            + " timestamp_ntz and string: cast a column to one of these types, or give an input"
            + " that has one";
    FeatureEncoder encoder = new FeatureEncoder();
    assertEquals(
        want, assertThrows(FeatureInputException.class, () -> encoder.fit(nested)).getMessage());
    assertEquals(
        want,
        assertThrows(FeatureInputException.class, () -> encoder.transformSchema(nested.schema()))
            .getMessage());
    // One column: "is of a type".
    FeatureInputException one =
        assertThrows(FeatureInputException.class, () -> encoder.fit(nested.select("blob")));
    assertTrue(
        one.getMessage()
            .startsWith(
                "no column of the input gets a feature: blob (binary) is of a type the encoder"
                    + " does not encode; "),
        one.getMessage());
  }

  @Test
  @Tag("gpu")
  void onTheGpuTheChosenFeaturesEqualTheCpuImplementations() {
    assertTrue(GpuStatus.current().gpu(), "no GPU: " + GpuStatus.current().reason());
    // The features alone, first, as the CPU implementation's rows below hold them.
    FeatureEncoderModel some = chosen().fit(data).setKeepInputs(false);
    PipelineReport report = PipelineReport.create(spark);
    List<Row> gpu = some.transformWithReport(data, report).collectAsList();
    assertTrue(report.gpuTasks() > 0, "no task ran on the GPU");
    assertEquals(0, report.cpuTasks(), "tasks ran on the CPU");
    FeaturePlan plan = some.plan.forInput(data.schema());
    List<Row> cpu = new ArrayList<>();
    List<List<String>> kinds = CpuFeatures.kindFeatures(plan);
    for (Row r : data.collectAsList()) {
      cpu.add(CpuFeatures.row(plan, kinds, r));
    }
    // Same input order on both sides: one Parquet read, collected in partition order.
    assertEquals(cpu.size(), gpu.size());
    for (int i = 0; i < cpu.size(); i++) {
      for (int k = 0; k < cpu.get(i).length(); k++) {
        Object w = cpu.get(i).get(k);
        Object g = gpu.get(i).get(k);
        if (w instanceof Double x) {
          assertEquals(x, (Double) g, 1e-12 * Math.max(1, Math.abs(x)), "row " + i + " col " + k);
        } else {
          assertEquals(w, g, "row " + i + " column " + k);
        }
      }
    }
  }

  private static org.apache.spark.sql.Column[] cols(List<String> names) {
    return names.stream().map(functions::col).toArray(org.apache.spark.sql.Column[]::new);
  }
}
