package dev.overlap.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.overlap.jobs.cli.StagedOutput;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A disk that fills up during a run, through the real {@code ./spark-submit.sh} on the host path
 * (no GPU here): the output on a {@link FullDiskFileSystem} of a few kilobytes, over an earlier
 * output of the same job. The run ends with exit code 1 and the one line the jobs give for a full
 * disk, no stack trace on the terminal; the earlier output and the input are byte for byte as they
 * were, and no staging folder is left.
 */
public class FullDiskIT {
  @TempDir static Path tmp;
  static Path lineitem;
  static Path agent;

  @BeforeAll
  static void inputs() throws Exception {
    lineitem = tmp.resolve("in/lineitem");
    SparkSession spark = TestTables.session();
    try {
      TestTables.lineitem(spark, lineitem);
    } finally {
      spark.stop();
    }
    agent = agentJar(tmp.resolve("fulldisk-agent.jar"));
  }

  /**
   * A jar of {@link FullDiskFileSystem}'s classes, with its do-nothing agent: {@code -javaagent:}
   * puts it on the class path of the JVM that {@code spark-submit.sh} starts with its own {@code
   * -cp}, where the job's Hadoop configuration finds the file system.
   */
  static Path agentJar(Path jar) throws Exception {
    Manifest m = new Manifest();
    m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    m.getMainAttributes().putValue("Premain-Class", FullDiskFileSystem.OnClassPath.class.getName());
    Path classes =
        Path.of(
            FullDiskFileSystem.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    String dir = FullDiskFileSystem.class.getPackageName().replace('.', '/');
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), m);
        Stream<Path> files = Files.list(classes.resolve(dir))) {
      for (Path f :
          files.filter(p -> p.getFileName().toString().startsWith("FullDiskFileSystem")).toList()) {
        out.putNextEntry(new JarEntry(dir + "/" + f.getFileName()));
        out.write(Files.readAllBytes(f));
        out.closeEntry();
      }
    }
    return jar;
  }

  /** An earlier output of {@code job}: its marker and a file of its own. */
  static Path earlierOutput(String job) throws IOException {
    Path out = Files.createDirectories(tmp.resolve("results/" + job));
    Files.writeString(out.resolve(StagedOutput.MARKER), "job=" + job + "\n");
    Files.writeString(out.resolve("part-00000-earlier.parquet"), "the earlier " + job + " result");
    return out;
  }

  /**
   * Runs {@code job} with its output on a disk of {@code capacity} bytes; checks the exit code, the
   * one line, and that no file under the test's folder changed.
   */
  static void fillsTheDisk(String job, long capacity) throws Exception {
    Path earlier = earlierOutput(job);
    String output = FullDiskFileSystem.SCHEME + "://" + job + earlier;
    TreeSnapshot before = TreeSnapshot.of(tmp);
    List<String> cmd = new ArrayList<>();
    cmd.add(Shell.ROOT.resolve("spark-submit.sh").toString());
    cmd.addAll(
        List.of(
            job,
            "--input",
            lineitem.toString(),
            "--output",
            output,
            "--overwrite",
            "--master",
            "local[2]",
            "--conf",
            "spark.hadoop.fs."
                + FullDiskFileSystem.SCHEME
                + ".impl="
                + FullDiskFileSystem.class.getName(),
            "--conf",
            "spark.hadoop." + FullDiskFileSystem.CAPACITY + "=" + capacity));
    String opts = System.getProperty("overlap.test.javaOptions", "").strip();
    Shell.Result r =
        Shell.run(cmd, Map.of("JDK_JAVA_OPTIONS", opts + " -javaagent:" + agent), tmp, 900);
    Shell.oneLine(
        r,
        1,
        job + " ran out of disk space (" + FullDiskFileSystem.NO_SPACE + ") writing --output '",
        output,
        "free some space",
        "(stack trace in ");
    assertEquals("", TreeSnapshot.of(tmp).diff(before), "files changed by " + cmd);
    try (Stream<Path> s = Files.list(earlier.getParent())) {
      assertEquals(
          List.of(),
          s.filter(p -> p.getFileName().toString().contains(".overlap-")).toList(),
          "staging folders left");
    }
    assertFalse(r.output().contains("hs_err_pid"), r.output());
  }

  /** etl: Spark's own Parquet writer. */
  @Test
  void etlOnAFullDiskEndsInOneLine() throws Exception {
    fillsTheDisk("etl", 1_000);
  }

  /** features: the executor's write API on the host path, Spark's writer under the kernel. */
  @Test
  void featuresOnAFullDiskEndsInOneLine() throws Exception {
    fillsTheDisk("features", 8_000);
  }
}
