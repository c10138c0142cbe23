package dev.overlap.features;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which columns the encoder encodes when {@code inputCols} names none: every column of a type it
 * encodes but the label ({@code labelCol}, {@code label} by default, as Spark ML's predictors name
 * it) and {@code excludeCols}; an id is encoded like any number unless excluded. The label goes
 * into the features only when named.
 */
class InputChoiceTest {
  static SparkSession spark;
  static Dataset<Row> train;

  @BeforeAll
  static void start() {
    spark = TestSessions.withPlugin("local[2]");
    train = FeatureVectorTest.rows(0, 600, spark); // id, x, city, day, label
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  @Test
  void theLabelIsLeftOutOfTheFeaturesUnlessNamed() {
    FeatureEncoder encoder = new FeatureEncoder().setOutputCol("features");
    FeatureEncoderModel model = encoder.fit(train);
    assertArrayEquals(new String[] {"id", "x", "city", "day"}, model.encodedColumns());
    assertArrayEquals(model.encodedColumns(), encoder.columnsToEncode(train.schema()));
    assertEquals(List.of("label (labelCol)"), model.leftOutColumns());
    assertTrue(
        model.vectorFeatures().stream().noneMatch(f -> f.startsWith("label")),
        model.vectorFeatures().toString());
    // The label passes through unchanged, beside the vector.
    List<Row> labels = model.transform(train).select("label").collectAsList();
    assertEquals(train.select("label").collectAsList(), labels);

    FeatureEncoderModel named = new FeatureEncoder().setInputCols("x", "label").fit(train);
    assertArrayEquals(new String[] {"x", "label"}, named.encodedColumns());
    assertTrue(named.featureNames().contains("label_std"), named.featureNames().toString());
    assertEquals(List.of(), named.leftOutColumns());
  }

  @Test
  void labelColNamesAnotherLabelAndExcludeColsLeavesColumnsOut(@TempDir Path dir) throws Exception {
    FeatureEncoder encoder =
        new FeatureEncoder().setLabelCol("x").setExcludeCols("ID").setOutputCol("v");
    FeatureEncoderModel model = encoder.fit(train);
    // "label" is not the label here, so it is a number like any other; "ID" finds id as Spark does.
    assertArrayEquals(new String[] {"city", "day", "label"}, model.encodedColumns());
    assertEquals(List.of("id (excludeCols)", "x (labelCol)"), model.leftOutColumns());
    String path = dir.resolve("m").toString();
    model.write().save(path);
    FeatureEncoderModel loaded = FeatureEncoderModel.load(path);
    assertEquals(model.leftOutColumns(), loaded.leftOutColumns());
    assertEquals("x", loaded.getOrDefault(loaded.labelCol()));
    assertArrayEquals(new String[] {"ID"}, loaded.getOrDefault(loaded.excludeCols()));
  }

  @Test
  void whatCannotBeLeftOutOrEncodedIsRefusedInOneLine() {
    Exception absent =
        assertThrows(
            FeatureInputException.class,
            () -> new FeatureEncoder().setExcludeCols("nope").fit(train));
    assertTrue(
        absent.getMessage().startsWith("the input has no column 'nope' to leave out (excludeCols)"),
        absent.getMessage());
    Exception both =
        assertThrows(
            FeatureInputException.class,
            () -> new FeatureEncoder().setInputCols("x").setExcludeCols("x").fit(train));
    assertEquals(
        "column 'x' is in both inputCols and excludeCols; leave it out of one", both.getMessage());
    // An id is not guessed at: it is a number like any other.
    assertArrayEquals(
        new String[] {"id"},
        new FeatureEncoder().fit(train.select("label", "id")).encodedColumns());
  }

  @Test
  void anInputOfTheLabelAloneIsRefusedSayingItIsLeftOut() {
    Exception e =
        assertThrows(
            FeatureInputException.class, () -> new FeatureEncoder().fit(train.select("label")));
    assertEquals(
        "no column of the input gets a feature: label (labelCol) is left out, and no other column"
            + " is of a type the encoder encodes ("
            + FeatureKinds.ENCODED
            + "); name the columns to encode in inputCols",
        e.getMessage());
  }

  @Test
  void theLogLineNamesTheColumnsEncodedAndThoseLeftOut() {
    InputChoice choice = InputChoice.of(train.schema(), new String[0], "label", new String[0]);
    assertEquals(
        "inputCols not set: encoding 4 columns: id, x, city, day; left out: label (labelCol)",
        choice.said());
  }
}
