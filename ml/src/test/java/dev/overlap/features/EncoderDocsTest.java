package dev.overlap.features;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.ml.param.Param;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * README.md's "In your own pipeline", {@code explainParams} and the behaviour say the same: the
 * index of an unseen string, which params the model carries, which of them are fixed when fitted.
 */
class EncoderDocsTest {
  static SparkSession spark;
  static String readme;

  @BeforeAll
  static void start() throws Exception {
    spark = TestSessions.withPlugin("local[2]");
    readme = Files.readString(Path.of("..", "README.md")).replaceAll("\\s+", " ");
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  @Test
  void anUnseenStringAndANullGetTheFittedVocabularysSizeAsTheDocsSay() {
    Dataset<Row> train =
        spark.sql(
            "SELECT element_at(array('a', 'b', 'c'), CAST(id % 3 + 1 AS INT)) AS s"
                + " FROM range(30)");
    Dataset<Row> later = spark.sql("SELECT * FROM VALUES ('b'), ('zzz'), (NULL) AS t(s)");
    FeatureEncoderModel model = new FeatureEncoder().setVocabularySize(20).fit(train);
    assertEquals(3, model.vocabulary("s").size());
    List<Object> idx = new ArrayList<>();
    model.transform(later).select("s_idx").collectAsList().forEach(r -> idx.add(r.get(0)));
    assertEquals(List.of(1, 3, 3), idx); // 3: the fitted vocabulary's size, not vocabularySize
    String doc = model.handleInvalid().doc();
    assertTrue(doc.contains("keep (index N, the size of the fitted vocabulary)"), doc);
    assertTrue(model.explainParams().contains(doc), model.explainParams());
    assertTrue(readme.contains("`keep`: index N, the size of the fitted vocabulary"), "README");
  }

  @Test
  void theModelCarriesEveryParamAndTheReadmeSaysWhichAreFixedWhenFitted() {
    FeatureEncoder encoder = new FeatureEncoder();
    FeatureEncoderModel model =
        encoder.fit(spark.sql("SELECT id * 1.5 AS x, CAST(id AS STRING) AS s FROM range(20)"));
    assertEquals(
        List.of(encoder.explainParams().split("\n")).stream().map(l -> l.split(":")[0]).toList(),
        List.of(model.explainParams().split("\n")).stream().map(l -> l.split(":")[0]).toList());
    Set<String> fixed = new TreeSet<>();
    Set<String> applied = new TreeSet<>();
    for (Param<?> p : model.params()) {
      assertTrue(readme.contains("`" + p.name() + "`"), "README.md names no param " + p.name());
      boolean docFixed = p.doc().endsWith(EncoderParams.FIXED);
      (docFixed ? fixed : applied).add(p.name());
      // A param acting at transform time has a setter on the model; one fixed when fitted not.
      String setter = "set" + Character.toUpperCase(p.name().charAt(0)) + p.name().substring(1);
      boolean hasSetter =
          java.util.Arrays.stream(FeatureEncoderModel.class.getMethods())
              .anyMatch(m -> m.getName().equals(setter));
      assertEquals(!docFixed, hasSetter, p.name());
    }
    assertEquals(
        fixed,
        listed("Fixed when fitted, the model's values being those it was fitted" + " with: "));
    assertEquals(applied, listed("Set on the model, they act at transform time: "));
  }

  /** The params README.md lists, in backquotes, after {@code lead} up to the next full stop. */
  private static Set<String> listed(String lead) {
    int at = readme.indexOf(lead);
    assertTrue(at >= 0, "README.md has no line '" + lead + "'");
    String list = readme.substring(at + lead.length(), readme.indexOf(".", at + lead.length()));
    Set<String> names = new TreeSet<>();
    Matcher m = Pattern.compile("`([A-Za-z]+)`").matcher(list);
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }
}
