package dev.overlap.features;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.jobs.TestSessions;
import java.io.ByteArrayOutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * README.md's pipeline example is a copy of examples/…/TrainAndServe.java; it compiles against this
 * build and, run on Parquet, saves a model and writes the test data's features in its columns.
 */
class EncoderExampleTest {
  private static final Path SOURCE =
      Path.of("..", "examples", "src", "main", "java", "example", "TrainAndServe.java");

  @Test
  void theReadmesPipelineExampleIsTrainAndServeJava() throws Exception {
    String code = Files.readString(SOURCE);
    assertTrue(
        Files.readString(Path.of("..", "README.md")).contains("```java\n" + code + "```\n"),
        "README.md's pipeline block is not a copy of " + SOURCE);
  }

  @Test
  void itCompilesAndWritesTheTestDatasFeatures(@TempDir Path dir) throws Exception {
    String cp =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    ByteArrayOutputStream errors = new ByteArrayOutputStream();
    Path classes = Files.createDirectories(dir.resolve("classes"));
    int rc =
        javac.run(
            null,
            errors,
            errors,
            "-d",
            classes.toString(),
            "-classpath",
            cp,
            "--release",
            "17",
            "-Xlint:all,-path,-processing",
            "-Werror",
            SOURCE.toString());
    assertEquals(0, rc, errors.toString(StandardCharsets.UTF_8));
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
      try (URLClassLoader loader =
          new URLClassLoader(new URL[] {classes.toUri().toURL()}, getClass().getClassLoader())) {
        loader
            .loadClass("example.TrainAndServe")
            .getMethod("main", String[].class)
            .invoke(null, (Object) new String[] {train, test, model, out});
      }
      FeatureEncoderModel saved = FeatureEncoderModel.load(model);
      assertEquals(100, saved.fittedRows());
      assertEquals(List.of("0", "1", "2", "3"), saved.vocabulary("s"));
      assertEquals(
          List.of("id_std", "id_log1p", "x_std", "x_log1p", "s_idx"),
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
}
