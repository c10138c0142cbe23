package dev.overlap.features;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.param.ParamPair;
import org.apache.spark.ml.tuning.CrossValidatorModel;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * README.md's pipeline example is a copy of examples/…/TrainAndServe.java; it compiles against this
 * build and, run on Parquet, saves a model and writes the test data's features in its columns.
 */
class EncoderExampleTest {
  private static final Path SOURCES = Path.of("..", "examples", "src", "main", "java", "example");

  /** The encoder's examples, each shown whole in README.md's "In your own pipeline". */
  static final List<String> EXAMPLES = List.of("TrainAndServe", "VectorPipeline", "TuneEncoder");

  @Test
  void theReadmesPipelineExamplesAreTheExamplesFiles() throws Exception {
    String readme = Files.readString(Path.of("..", "README.md"));
    for (String example : EXAMPLES) {
      Path source = SOURCES.resolve(example + ".java");
      assertTrue(
          readme.contains("```java\n" + Files.readString(source) + "```\n"),
          "README.md's pipeline block is not a copy of " + source);
    }
  }

  /** The examples compiled against this build, as a project of one's own compiles them. */
  static Path compile(Path dir) throws Exception {
    String cp =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    ByteArrayOutputStream errors = new ByteArrayOutputStream();
    Path classes = Files.createDirectories(dir.resolve("classes"));
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                "-d",
                classes.toString(),
                "-classpath",
                cp,
                "--release",
                "17",
                "-Xlint:all,-path,-processing",
                "-Werror"));
    EXAMPLES.forEach(e -> args.add(SOURCES.resolve(e + ".java").toString()));
    int rc = javac.run(null, errors, errors, args.toArray(String[]::new));
    assertEquals(0, rc, errors.toString(StandardCharsets.UTF_8));
    return classes;
  }

  /** Runs example {@code name}'s main with {@code args}, from {@code classes}. */
  static void run(Path classes, String name, String... args) throws Exception {
    try (URLClassLoader loader =
        new URLClassLoader(
            new URL[] {classes.toUri().toURL()}, EncoderExampleTest.class.getClassLoader())) {
      loader
          .loadClass("example." + name)
          .getMethod("main", String[].class)
          .invoke(null, (Object) args);
    }
  }

  @Test
  void itCompilesAndWritesTheTestDatasFeatures(@TempDir Path dir) throws Exception {
    Path classes = compile(dir);
    SparkSession spark = TestSessions.local("local[2]");
    try {
      String train = dir.resolve("train").toString();
      String test = dir.resolve("test").toString();
      spark
          .sql("select id, id * 0.5 as x, cast(id % 4 as string) as s from range(100)")
          .write()
          .parquet(train);
      spark
          .sql("select id, id * 0.5 as x, cast(id % 6 as string) as s from range(100, 150)")
          .write()
          .parquet(test);
      String model = dir.resolve("model").toString();
      String out = dir.resolve("out").toString();
      run(classes, "TrainAndServe", train, test, model, out);
      FeatureEncoderModel saved = FeatureEncoderModel.load(model);
      assertEquals(100, saved.fittedRows());
      assertEquals(List.of("0", "1", "2", "3"), saved.vocabulary("s"));
      assertEquals(
          List.of("id", "x", "s", "id_std", "id_log1p", "x_std", "x_log1p", "s_idx"),
          List.of(spark.read().parquet(out).columns()));
      assertEquals(50, spark.read().parquet(out).count());
      // "4" and "5" occur only in the test data: outside the vocabulary, both get index 4.
      assertEquals(
          spark.read().parquet(test).where("id % 6 >= 4").count(),
          spark.read().parquet(out).where("s_idx = 4").count());
    } finally {
      spark.stop();
    }
  }

  @Test
  void thePipelineAndTuningExamplesRunOnTheEncodersVector(@TempDir Path dir) throws Exception {
    Path classes = compile(dir);
    SparkSession spark = TestSessions.local("local[2]");
    try {
      String data = dir.resolve("data").toString();
      spark
          .sql(
              "select id, sin(id) * 3 + id % 5 as x,"
                  + " element_at(array('oslo', 'bern', 'rome', 'lima'), cast(id % 4 + 1 as int))"
                  + " as city,"
                  + " if(sin(id) * 3 + id % 5 + (id * 7919 % 101) / 30.0 > 4, 1.0, 0.0) as label"
                  + " from range(600)")
          .write()
          .parquet(data);
      String pipeline = dir.resolve("pipeline").toString();
      run(classes, "VectorPipeline", data, "label", pipeline);
      PipelineModel fitted = PipelineModel.load(pipeline);
      FeatureEncoderModel encoder = (FeatureEncoderModel) fitted.stages()[0];
      assertEquals("features", encoder.getOrDefault(encoder.outputCol()));
      LogisticRegressionModel lr = (LogisticRegressionModel) fitted.stages()[1];
      // One coefficient per feature of the vector, in the order the model saved.
      assertEquals(encoder.vectorFeatures().size(), lr.coefficients().size());
      Dataset<Row> scored = fitted.transform(spark.read().parquet(data));
      assertEquals(600, scored.count());
      assertTrue(scored.where("prediction = label").count() > 400, "the model learned nothing");

      String tuned = dir.resolve("tuned").toString();
      run(classes, "TuneEncoder", data, "label", tuned);
      CrossValidatorModel cv = CrossValidatorModel.load(tuned);
      double[] metrics = cv.avgMetrics();
      assertEquals(4, metrics.length, "one metric per setting of the grid");
      int best = 0;
      for (int i = 1; i < metrics.length; i++) {
        best = metrics[i] > metrics[best] ? i : best;
      }
      // The best model's encoder was fitted with the best setting's vocabularySize.
      ParamMap winner = cv.getEstimatorParamMaps()[best];
      PipelineModel bestModel = (PipelineModel) cv.bestModel();
      FeatureEncoderModel bestEncoder = (FeatureEncoderModel) bestModel.stages()[0];
      int wanted = -1;
      for (ParamPair<?> pair : scala.jdk.javaapi.CollectionConverters.asJava(winner.toSeq())) {
        if (pair.param().name().equals("vocabularySize")) {
          wanted = (Integer) pair.value();
        }
      }
      assertEquals(wanted, (int) bestEncoder.getOrDefault(bestEncoder.vocabularySize()));
      assertEquals(Math.min(wanted, 4), bestEncoder.vocabulary("city").size());
    } finally {
      spark.stop();
    }
  }
}
