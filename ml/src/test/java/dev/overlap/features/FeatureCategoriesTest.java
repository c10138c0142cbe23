package dev.overlap.features;

import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.ml.attribute.Attribute;
import org.apache.spark.ml.attribute.AttributeGroup;
import org.apache.spark.ml.attribute.NominalAttribute;
import org.apache.spark.ml.classification.DecisionTreeClassificationModel;
import org.apache.spark.ml.classification.DecisionTreeClassifier;
import org.apache.spark.ml.feature.StringIndexer;
import org.apache.spark.ml.feature.VectorAssembler;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.tree.CategoricalSplit;
import org.apache.spark.ml.tree.InternalNode;
import org.apache.spark.ml.util.MetadataUtils;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructField;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A string's index carries Spark ML's {@code NominalAttribute}, as {@code StringIndexer} writes it
 * (its name, the vocabulary in index order, then the unseen slot where index N may occur), and the
 * vector's slots carry it as {@code VectorAssembler} would, so that a decision tree splits on the
 * index as on categories, with no {@code VectorIndexer}.
 */
class FeatureCategoriesTest {
  static SparkSession spark;
  static Dataset<Row> train;

  @BeforeAll
  static void start() {
    spark = TestSessions.withPlugin("local[2]");
    train = rows(spark);
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  /** A number, a city with no missing value, a zone with nulls, and a label of the city. */
  static Dataset<Row> rows(SparkSession spark) {
    return spark
        .range(0, 800, 1, 4)
        .selectExpr(
            "sin(id) * 10 AS x",
            "element_at(array('oslo', 'bern', 'rome', 'lima'), CAST(id % 4 + 1 AS INT)) AS city",
            "CASE WHEN id % 11 = 0 THEN NULL"
                + " ELSE element_at(array('a', 'b', 'c'), CAST(id % 3 + 1 AS INT)) END AS zone",
            "IF(id % 4 IN (0, 3) OR id % 29 = 1, 1.0, 0.0) AS label");
  }

  static FeatureEncoder encoder() {
    return new FeatureEncoder().setInputCols("x", "city", "zone");
  }

  static String[] values(StructField f) {
    return ((NominalAttribute) Attribute.fromStructField(f)).values().get();
  }

  @Test
  void indexColumnsCarryStringIndexersNominalAttribute() {
    for (String mode : List.of("keep", "skip")) {
      FeatureEncoderModel model = encoder().setHandleInvalid(mode).fit(train);
      Dataset<Row> ours = model.transform(train);
      assertEquals(model.transformSchema(train.schema()), ours.schema());
      for (String c : List.of("city", "zone")) {
        String[] labels =
            new StringIndexer()
                .setInputCol(c)
                .setOutputCol(c + "_si")
                .setHandleInvalid(mode)
                .fit(train)
                .labelsArray()[0];
        List<String> want = new ArrayList<>(List.of(labels));
        // The unseen slot: kept strings get it, and so do a zone's nulls.
        if (mode.equals("keep") || c.equals("zone")) {
          want.add("__unknown");
        }
        StructField f = ours.schema().apply(c + "_idx");
        assertArrayEquals(want.toArray(), values(f), mode + " " + c);
        assertEquals(c + "_idx", Attribute.fromStructField(f).name().get());
      }
    }
    // With keep, the attribute is the one StringIndexer writes, labels and unseen slot alike.
    Dataset<Row> theirs =
        new StringIndexer()
            .setInputCol("city")
            .setOutputCol("city_idx")
            .setHandleInvalid("keep")
            .fit(train)
            .transform(train.drop("zone"));
    assertArrayEquals(
        values(theirs.schema().apply("city_idx")),
        values(encoder().fit(train).transform(train).schema().apply("city_idx")));
  }

  @Test
  void theVectorsSlotsAreNominalAndATreeSplitsTheIndexAsCategories() {
    FeatureEncoderModel model = encoder().setOutputCol("features").fit(train);
    Dataset<Row> ours = model.transform(train);
    StructField vector = ours.schema().apply("features");
    int city = model.vectorFeatures().indexOf("city_idx");
    int zone = model.vectorFeatures().indexOf("zone_idx");
    scala.collection.immutable.Map<Object, Object> categorical =
        MetadataUtils.getCategoricalFeatures(vector);
    assertEquals(2, categorical.size(), categorical.toString());
    assertEquals(5, categorical.apply(city)); // four cities and the unseen slot (keep)
    assertEquals(4, categorical.apply(zone)); // three zones and the slot of null and unseen

    // VectorAssembler writes the same attributes over the per-column features, the indices as
    // doubles with their metadata (as StringIndexer gives them).
    Dataset<Row> theirs = assembled(model, train);
    assertEquals(
        AttributeGroup.fromStructField(theirs.schema().apply("features")),
        AttributeGroup.fromStructField(vector));

    DecisionTreeClassifier dt = new DecisionTreeClassifier().setMaxDepth(3).setSeed(7);
    DecisionTreeClassificationModel tree = dt.fit(ours);
    assertEquals(2, tree.numClasses());
    InternalNode root = (InternalNode) tree.rootNode();
    assertTrue(root.split() instanceof CategoricalSplit, tree.toDebugString());
    assertEquals(city, root.split().featureIndex());
    assertEquals(dt.fit(theirs).toDebugString(), tree.toDebugString());
  }

  /** The model's vector features as columns, assembled by Spark ML, indices as doubles. */
  static Dataset<Row> assembled(FeatureEncoderModel model, Dataset<Row> in) {
    Dataset<Row> columns = model.copy(new ParamMap()).setOutputCol("").transform(in);
    List<Column> cols = new ArrayList<>();
    for (StructField f : columns.schema().fields()) {
      cols.add(
          f.name().endsWith("_idx")
              ? col(f.name()).cast("double").as(f.name(), f.metadata())
              : col(f.name()));
    }
    return new VectorAssembler()
        .setInputCols(model.vectorFeatures().toArray(new String[0]))
        .setOutputCol("features")
        .transform(columns.select(cols.toArray(new Column[0])));
  }
}
