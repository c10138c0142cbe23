package dev.overlap.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.jobs.cli.StagedOutput;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Real runs of etl and generate stopped with SIGINT, SIGTERM and SIGKILL while the result is being
 * built, between its two tables, and in the middle of the final replace. Afterwards (and after the
 * next run, which puts right what a killed one left) the output holds exactly the earlier result,
 * byte for byte, or exactly the complete new one; nothing else is left beside it.
 */
@Execution(ExecutionMode.CONCURRENT) // each test in its own folders: two at once (jobs/pom.xml)
public class InterruptedRunsIT {
  @TempDir static Path tmp;
  static Path lineitem;

  enum Point {
    /** Spark tasks are writing the first table into the staging folder. */
    BUILDING,
    /** The first table is complete, the second not started. */
    BETWEEN,
    /** The earlier result has been moved aside; the new one is not yet in its place. */
    REPLACE
  }

  @BeforeAll
  static void input() {
    SparkSession spark = TestTables.session();
    try {
      lineitem = tmp.resolve("lineitem");
      TestTables.lineitem(spark, lineitem);
    } finally {
      spark.stop();
    }
  }

  // Every signal and every point, but not every pair: each run is a JVM and Spark (most of the
  // test command's time). The signals differ in the exit code and in whether the job's hook runs
  // (not for SIGKILL); the points in what the staging folder holds. Over etl's runs and generate's,
  // each signal meets two points, each point two signals, and a replace is stopped both with and
  // without the hook.
  @Test
  void etlSigint() throws Exception {
    etl("INT", Point.BUILDING);
    etl("INT", Point.REPLACE);
  }

  @Test
  void etlSigterm() throws Exception {
    etl("TERM", Point.BETWEEN);
  }

  @Test
  void etlSigkill() throws Exception {
    etl("KILL", Point.BUILDING);
    etl("KILL", Point.REPLACE);
  }

  @Test
  void generateStoppedThenRunAgain() throws Exception {
    generate("TERM", Point.BUILDING);
    generate("INT", Point.BETWEEN);
    generate("KILL", Point.REPLACE);
    // Nothing an interrupted run left blocks the next one.
    Path out = tmp.resolve("gen-KILL-REPLACE/out");
    Shell.Result r =
        Shell.submit(
            out.getParent(), "generate", "--scale", "0.01", "--output", "out", "--overwrite");
    assertEquals(0, r.exitCode(), r.output());
    assertNew(out, "generate", "lineitem", "orders");
    assertEquals(List.of(), leftovers(out), "left beside the output");
  }

  private void etl(String signal, Point point) throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("etl-" + signal + "-" + point));
    Path out = earlierResult(dir.resolve("out"), "etl", "q1", "q6");
    stopAndCheck(
        signal,
        point,
        out,
        "etl",
        List.of("etl", "--input", lineitem.toString(), "--output", "out", "--overwrite"),
        "q1",
        "q6");
  }

  private void generate(String signal, Point point) throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("gen-" + signal + "-" + point));
    Path out = earlierResult(dir.resolve("out"), "generate", "lineitem", "orders");
    stopAndCheck(
        signal,
        point,
        out,
        "generate",
        List.of("generate", "--scale", "0.01", "--output", "out", "--overwrite"),
        "lineitem",
        "orders");
  }

  /** An earlier result of {@code job}: marked, with a file in each table folder. */
  private static Path earlierResult(Path out, String job, String... tables) throws IOException {
    for (String t : tables) {
      Files.createDirectories(out.resolve(t));
      Files.writeString(out.resolve(t + "/part-00000.parquet"), "earlier " + t);
      Files.writeString(out.resolve(t + "/_SUCCESS"), "");
    }
    Files.writeString(out.resolve(StagedOutput.MARKER), "job=" + job + "\nwritten=earlier\n");
    Files.writeString(out.getParent().resolve("beside.txt"), "a file beside the output");
    return out;
  }

  private void stopAndCheck(
      String signal, Point point, Path out, String job, List<String> args, String... tables)
      throws Exception {
    Path dir = out.getParent();
    TreeSnapshot before = TreeSnapshot.of(dir);
    List<String> cmd = new ArrayList<>();
    // A shell that was started in the background ignores SIGINT, and so would the JVM it starts:
    // give SIGINT its default action back, as in an interactive terminal.
    cmd.addAll(List.of("perl", "-e", "$SIG{INT} = 'DEFAULT'; exec @ARGV or die", "--"));
    cmd.add(Shell.ROOT.resolve("spark-submit.sh").toString());
    cmd.addAll(args);
    Path log = dir.resolve("run.log.txt");
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile());
    Shell.forTests(pb.environment());
    pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
    pb.environment().remove("SPARK_HOME");
    if (point != Point.BUILDING) {
      pb.environment()
          .put(StagedOutput.PAUSE_ENV, point == Point.BETWEEN ? "between-tables" : "replace");
    }
    pb.redirectErrorStream(true).redirectOutput(log.toFile());
    Process p = pb.start();
    String what = job + " " + signal + " at " + point;
    try {
      waitFor(point, dir, log, p, what);
      new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid()))
          .inheritIO()
          .start()
          .waitFor();
      assertTrue(p.waitFor(120, TimeUnit.SECONDS), what + ": still running after the signal");
    } finally {
      p.destroyForcibly();
    }
    String output = Files.readString(log);
    Files.delete(log);
    int expectedExit = Map.of("INT", 130, "TERM", 143, "KILL", 137).get(signal);
    assertEquals(expectedExit, p.exitValue(), what + ":\n" + output);
    boolean replaced = point == Point.REPLACE && !signal.equals("KILL");
    if (!signal.equals("KILL")) {
      assertTrue(
          output.contains(
              replaced
                  ? "overlap: interrupted after the new result was in place"
                  : "overlap: interrupted; nothing was changed"),
          what + ":\n" + output);
    }
    // The next run puts right what a killed one left, before it looks at anything else (here it
    // then stops at its missing input).
    Shell.Result next =
        job.equals("etl")
            ? Shell.submit(dir, "etl", "--input", "missing", "--output", "out", "--overwrite")
            : Shell.submit(dir, "generate", "--scale", "100000", "--output", "out");
    assertEquals(2, next.exitCode(), next.output());
    if (replaced) {
      assertNew(out, job, tables);
    } else {
      assertEquals("", TreeSnapshot.of(dir).diff(before), what + ": the earlier result changed");
    }
    assertEquals(List.of(), leftovers(out), what + ": left beside the output");
  }

  private static void waitFor(Point point, Path dir, Path log, Process p, String what)
      throws Exception {
    boolean reached =
        Poll.until(
            Duration.ofSeconds(300),
            Duration.ofMillis(20),
            () -> {
              assertTrue(p.isAlive(), what + ": ended early:\n" + Files.readString(log));
              return point == Point.BUILDING
                  ? buildingTable(dir)
                  : Files.readString(log).contains("paused at");
            });
    if (!reached) {
      throw new AssertionError(what + ": never reached the point:\n" + Files.readString(log));
    }
  }

  /** Whether Spark is writing a table in the staging folder ({@code _temporary} exists). */
  private static boolean buildingTable(Path dir) throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      return s.anyMatch(
          f ->
              f.getFileName().toString().equals("_temporary")
                  && f.toString().contains(StagedOutput.STAGING));
    }
  }

  private static void assertNew(Path out, String job, String... tables) throws IOException {
    String marker = Files.readString(out.resolve(StagedOutput.MARKER));
    assertTrue(marker.startsWith("job=" + job + "\n") && !marker.contains("earlier"), marker);
    for (String t : tables) {
      assertTrue(Files.exists(out.resolve(t + "/_SUCCESS")), t + " incomplete");
      try (Stream<Path> s = Files.list(out.resolve(t))) {
        assertTrue(
            s.anyMatch(f -> f.toString().endsWith(".parquet") && f.toFile().length() > 100),
            t + " has no new Parquet file");
      }
    }
  }

  private static List<Path> leftovers(Path out) throws IOException {
    try (Stream<Path> s = Files.list(out.getParent())) {
      return s.filter(f -> f.getFileName().toString().contains(".overlap-")).toList();
    }
  }
}
