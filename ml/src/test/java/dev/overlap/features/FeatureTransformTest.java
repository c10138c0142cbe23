package dev.overlap.features;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.SparkContext;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.Transformer;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.evaluation.BinaryClassificationEvaluator;
import org.apache.spark.ml.feature.VectorAssembler;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link FeatureEncoderModel#transform} is what Spark ML's transformers are: lazy (no Spark job
 * before an action), narrow (the input's partitions and row order kept, the columns passed through
 * beside the features of the same row), and so the same rows in the same order on every call, from
 * a fitted model, a loaded one, or one inside a {@code PipelineModel}. On the CPU path, as CI runs.
 */
class FeatureTransformTest {
  /** The columns the model does not encode: a long, a label, a boolean, nested and binary. */
  static final String[] PASSED = {"id", "label", "flag", "tags", "pair", "blob"};

  static SparkSession spark;
  static Dataset<Row> train;
  static Dataset<Row> test;

  @BeforeAll
  static void start() {
    spark = TestSessions.withPlugin("local[2]");
    train = rows(0, 3000, 5);
    test = rows(3000, 2000, 4);
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  /**
   * Rows {@code from} … {@code from + n - 1} in {@code partitions} partitions, in id order: a
   * number with nulls, a city, and columns that pass through (a label that depends on the number
   * with noise, so a logistic regression scores it with many distinct values).
   */
  static Dataset<Row> rows(long from, long n, int partitions) {
    return spark
        .range(from, from + n, 1, partitions)
        .selectExpr(
            "id",
            "CASE WHEN id % 13 = 3 THEN NULL ELSE sin(id) * 10 + id % 7 END AS x",
            "CASE WHEN id % 17 = 5 THEN NULL"
                + " ELSE element_at(array('oslo', 'bern', 'rome', 'lima'), CAST(id % 4 + 1 AS INT))"
                + " END AS city",
            "IF(sin(id) * 10 + id % 7 + (id * 7919 % 101) / 12.0 > 8, 1.0, 0.0) AS label",
            "id % 2 = 0 AS flag",
            "IF(id % 11 = 1, NULL, array(CAST(id % 3 AS INT), CAST(id % 5 AS INT))) AS tags",
            "named_struct('a', id % 11, 'b', CAST(id AS STRING)) AS pair",
            "CAST(CAST(id AS STRING) AS BINARY) AS blob");
  }

  static FeatureEncoder encoder() {
    return new FeatureEncoder().setInputCols("x", "city").setVocabularySize(3);
  }

  @Test
  void transformStartsNoJobBeforeAnAction() throws Exception {
    FeatureEncoderModel model = encoder().fit(train);
    SparkContext sc = spark.sparkContext();
    sc.listenerBus().waitUntilEmpty(10_000);
    AtomicInteger jobs = new AtomicInteger();
    SparkListener counter =
        new SparkListener() {
          @Override
          public void onJobStart(SparkListenerJobStart start) {
            jobs.incrementAndGet();
          }
        };
    sc.addSparkListener(counter);
    try {
      Dataset<Row> out = model.transform(test);
      Dataset<Row> again = model.transform(test.where("id % 3 = 0"));
      sc.listenerBus().waitUntilEmpty(10_000);
      assertEquals(0, jobs.get(), "jobs started by transform alone");
      // Every input column first, unchanged in name and order, then the features.
      List<String> columns = List.of(out.columns());
      assertEquals(List.of(test.columns()), columns.subList(0, test.columns().length));
      assertEquals(model.featureNames(), columns.subList(test.columns().length, columns.size()));
      assertTrue(again.count() > 0);
      sc.listenerBus().waitUntilEmpty(10_000);
      assertTrue(jobs.get() > 0, "the listener saw no job of the action");
    } finally {
      sc.removeSparkListener(counter);
    }
  }

  @Test
  void theInputsPartitionsAndRowOrderAreKept() {
    FeatureEncoderModel model = encoder().fit(train);
    // A shuffled input, ordered within each partition.
    Dataset<Row> shuffled =
        test.repartition(3, functions.col("id")).sortWithinPartitions(functions.desc("id"));
    // As for an input too large to broadcast: a join back by a row id would shuffle.
    spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "-1");
    try {
      for (Dataset<Row> in : List.of(test, shuffled)) {
        Dataset<Row> out = model.transform(in);
        assertEquals(in.rdd().getNumPartitions(), out.rdd().getNumPartitions());
        assertEquals(passed(in).collectAsList(), passed(out).collectAsList());
      }
    } finally {
      spark.conf().unset("spark.sql.autoBroadcastJoinThreshold");
    }
  }

  @Test
  void twoCollectsGiveTheSameRowsInTheSameOrder() {
    FeatureEncoderModel model = encoder().fit(train);
    Dataset<Row> out = model.transform(test.repartition(3));
    List<Row> first = out.collectAsList();
    assertEquals(2000, first.size());
    assertSameRows(first, out.collectAsList());
    assertSameRows(first, model.transform(test.repartition(3)).collectAsList());
  }

  @Test
  void aLoadedModelGivesTheFittedOnesOutputAloneAndInAPipeline(@TempDir Path dir) throws Exception {
    FeatureEncoderModel model = encoder().fit(train);
    model.write().save(dir.resolve("model").toString());
    FeatureEncoderModel loaded = FeatureEncoderModel.load(dir.resolve("model").toString());
    assertSameRows(model.transform(test).collectAsList(), loaded.transform(test).collectAsList());
    PipelineModel pipeline = pipeline().fit(train);
    pipeline.write().save(dir.resolve("pipeline").toString());
    PipelineModel again = PipelineModel.load(dir.resolve("pipeline").toString());
    assertEquals(FeatureEncoderModel.class, again.stages()[0].getClass());
    assertSameRows(pipeline.transform(test).collectAsList(), again.transform(test).collectAsList());
    // The encoder alone in a pipeline of its own, loaded.
    PipelineModel alone = new PipelineModel("alone", new Transformer[] {model});
    alone.write().save(dir.resolve("alone").toString());
    assertSameRows(
        model.transform(test).collectAsList(),
        PipelineModel.load(dir.resolve("alone").toString()).transform(test).collectAsList());
  }

  @Test
  void anEvaluatorGivesTheSameAucTwice() {
    PipelineModel fitted = pipeline().fit(train);
    BinaryClassificationEvaluator auc = new BinaryClassificationEvaluator().setLabelCol("label");
    Dataset<Row> scored = fitted.transform(test);
    assertEquals(4, scored.rdd().getNumPartitions());
    // Spark's evaluator itself varies over an input of several partitions, whatever computed it:
    // its sort's bounds come from a sample of a shuffle's output, whose order varies from run to
    // run. Over one partition (the transform still runs on four) it gives one AUC.
    double first = auc.evaluate(scored.coalesce(1));
    assertTrue(first > 0.6 && first < 1.0, "AUC " + first);
    assertEquals(first, auc.evaluate(scored.coalesce(1)));
    assertEquals(first, auc.evaluate(fitted.transform(test).coalesce(1)));
  }

  /** The encoder, an assembler of its features and a logistic regression of the label. */
  static Pipeline pipeline() {
    return new Pipeline()
        .setStages(
            new PipelineStage[] {
              encoder(),
              new VectorAssembler()
                  .setInputCols(new String[] {"x_std", "x_isnull", "city_idx"})
                  .setOutputCol("features"),
              new LogisticRegression().setMaxIter(20).setLabelCol("label")
            });
  }

  static Dataset<Row> passed(Dataset<Row> d) {
    return d.select(InputColumns.cols(PASSED));
  }

  /** Equal rows in the same order, doubles (also inside vectors) bit for bit. */
  static void assertSameRows(List<Row> want, List<Row> got) {
    assertEquals(want.size(), got.size());
    for (int i = 0; i < want.size(); i++) {
      Row w = want.get(i);
      Row g = got.get(i);
      assertEquals(w.length(), g.length());
      for (int k = 0; k < w.length(); k++) {
        String at = "row " + i + " column " + k;
        Object a = w.get(k);
        Object b = g.get(k);
        if (a instanceof Double x && b instanceof Double y) {
          assertEquals(Double.doubleToRawLongBits(x), Double.doubleToRawLongBits(y), at);
        } else if (a instanceof Vector x && b instanceof Vector y) {
          assertEquals(x.size(), y.size(), at);
          for (int j = 0; j < x.size(); j++) {
            assertEquals(
                Double.doubleToRawLongBits(x.apply(j)), Double.doubleToRawLongBits(y.apply(j)), at);
          }
        } else {
          assertEquals(bytesAsHex(a), bytesAsHex(b), at);
        }
      }
    }
  }

  /** A binary value as its bytes in hex, so that it compares by content; others unchanged. */
  private static Object bytesAsHex(Object o) {
    return o instanceof byte[] bytes ? java.util.HexFormat.of().formatHex(bytes) : o;
  }
}
