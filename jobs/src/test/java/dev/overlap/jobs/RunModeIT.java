package dev.overlap.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./spark-submit.sh run}: one's own application, in a jar of its own, runs with the plugin
 * and the examples' kernel (its CPU implementation here), its arguments passed unchanged; what it
 * cannot run is one line.
 */
public class RunModeIT {
  // Its session from TestSessions.submitted(), compiled into the jar with it: spark-submit, not the
  // test, sets the master and the settings of a main it starts.
  private static final String APP =
      "package app;\n"
          + "import dev.overlap.executor.api.GpuPartitions;\n"
          + "import org.apache.spark.sql.Dataset;\n"
          + "import org.apache.spark.sql.Row;\n"
          + "import org.apache.spark.sql.SparkSession;\n"
          + "import org.apache.spark.sql.functions;\n"
          + "public final class SumApp {\n"
          + "  public static void main(String[] args) {\n"
          + "    SparkSession spark = dev.overlap.jobs.TestSessions.submitted();\n"
          + "    Dataset<Row> in = spark.range(1, 101).selectExpr(\n"
          + "        \"cast(id as decimal(12,2)) as l_extendedprice\",\n"
          + "        \"cast(0.10 as decimal(12,2)) as l_discount\");\n"
          + "    Object sum = GpuPartitions.map(in, new example.Revenue())\n"
          + "        .agg(functions.sum(\"revenue\")).first().get(0);\n"
          + "    System.out.println(\"revenue \" + sum + \" args \" + String.join(\" \", args));\n"
          + "    spark.stop();\n"
          + "  }\n"
          + "}\n";

  @TempDir Path tmp;

  /**
   * The examples' kernel and the application above, compiled into one jar with {@link
   * TestSessions}, through which the application gets its session as every test does.
   */
  private Path appJar() throws Exception {
    Path src = Files.createDirectories(tmp.resolve("src/app")).resolve("SumApp.java");
    Files.writeString(src, APP);
    Path classes = Files.createDirectories(tmp.resolve("classes"));
    String cp =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    ByteArrayOutputStream errors = new ByteArrayOutputStream();
    Path revenue = Shell.ROOT.resolve("examples/src/main/java/example/Revenue.java");
    Path sessions = Shell.ROOT.resolve("jobs/src/test/java/dev/overlap/jobs/TestSessions.java");
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
            revenue.toString(),
            sessions.toString(),
            src.toString());
    assertEquals(0, rc, errors.toString(StandardCharsets.UTF_8));
    Path jar = tmp.resolve("app.jar");
    try (OutputStream out = Files.newOutputStream(jar);
        JarOutputStream j = new JarOutputStream(out);
        Stream<Path> files = Files.walk(classes)) {
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        j.putNextEntry(new JarEntry(classes.relativize(f).toString().replace('\\', '/')));
        j.write(Files.readAllBytes(f));
        j.closeEntry();
      }
    }
    return jar;
  }

  @Test
  void onesOwnApplicationRunsWithThePluginAndItsArguments() throws Exception {
    String jar = appJar().toString();
    Shell.Result r =
        Shell.submit(
            tmp, "run", "--class", "app.SumApp", "--master", "local[2]", jar, "--conf", "x", "y");
    assertEquals(0, r.exitCode(), r.output());
    // 0.10 times 1 … 100: the kernel's decimal(18,4) sums, finished by Spark.
    assertTrue(r.output().contains("revenue 505.0000 args --conf x y"), r.output());
    assertTrue(!r.output().contains("\tat "), "a stack trace:\n" + r.output());
  }

  @Test
  void whatRunCannotRunIsOneLine() throws Exception {
    String jar = appJar().toString();
    Shell.oneLine(Shell.submit(tmp, "run", jar), 2, "run needs --class MAIN");
    Shell.oneLine(Shell.submit(tmp, "run", "--class", "app.SumApp"), 2, "application's jar");
    Shell.oneLine(
        Shell.submit(tmp, "run", "--class", "app.SumApp", "no/such.jar"),
        2,
        "no readable jar 'no/such.jar'");
    Shell.oneLine(
        Shell.submit(tmp, "run", "--class", "app.SumApp", "--jars", "none.jar", jar),
        2,
        "--jars: no readable jar 'none.jar'");
    Shell.oneLine(
        Shell.submit(tmp, "run", "--clas", "app.SumApp", jar), 2, "unknown option '--clas'");
  }
}
