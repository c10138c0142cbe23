package dev.overlap.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real standalone cluster on this machine: a Master and two Workers started from the jars Maven
 * resolved, each Worker launching its own executor JVM. The etl job is submitted through
 * ./spark-submit.sh --master spark://...; the plugin must start in both executor JVMs and the
 * result must equal Spark SQL's. The cluster is shut down whatever happens.
 */
public class StandaloneClusterIT {
  private static final Pattern STARTED =
      Pattern.compile("Overlap: executor (\\S+) (on GPU|has no usable GPU)");

  @TempDir Path tmp;

  private final List<Process> daemons = new ArrayList<>();

  @Test
  void theJobRunsOnTwoWorkersWithThePluginInEachExecutor() throws Exception {
    Shell.Result gen = Shell.submit(tmp, "generate", "--scale", "0.01", "--output", "tpch");
    assertEquals(0, gen.exitCode(), gen.output());
    Path sparkHome = sparkHome();
    int port = freePort();
    String master = "spark://127.0.0.1:" + port;
    try {
      Path masterLog = tmp.resolve("master.log");
      start(
          sparkHome,
          masterLog,
          "org.apache.spark.deploy.master.Master",
          "--host",
          "127.0.0.1",
          "--port",
          String.valueOf(port),
          "--webui-port",
          "0");
      awaitLine(masterLog, "I have been elected leader");
      for (int w = 1; w <= 2; w++) {
        Path log = tmp.resolve("worker" + w + ".log");
        start(
            sparkHome,
            log,
            "org.apache.spark.deploy.worker.Worker",
            master,
            "--host",
            "127.0.0.1",
            "--cores",
            "1",
            "--memory",
            "1g",
            "--webui-port",
            "0",
            "--work-dir",
            tmp.resolve("work" + w).toString());
        awaitLine(log, "Successfully registered with master");
      }

      Shell.Result r =
          Shell.submit(
              tmp,
              "etl",
              "--input",
              "tpch/lineitem",
              "--output",
              "etl",
              "--master",
              master,
              "--total-executor-cores",
              "2",
              "--executor-cores",
              "1",
              "--executor-memory",
              "1g");
      assertEquals(0, r.exitCode(), r.output());

      // Each executor JVM logged the plugin's start line, under its own worker.
      Set<String> executors = new TreeSet<>();
      for (int w = 1; w <= 2; w++) {
        List<String> found = startLines(tmp.resolve("work" + w));
        assertEquals(1, found.size(), "worker " + w + " executors: " + found);
        executors.addAll(found);
      }
      assertEquals(2, executors.size(), executors.toString());

      SparkSession spark = TestSessions.local("local[1]");
      try {
        spark.read().parquet(tmp.resolve("tpch/lineitem").toString()).createOrReplaceTempView("l");
        Dataset<Row> expected =
            spark.sql(
                "select l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice),"
                    + " count(*) from l where l_shipdate <= date '1998-09-02'"
                    + " group by 1, 2 order by 1, 2");
        Dataset<Row> got =
            spark
                .read()
                .parquet(tmp.resolve("etl/q1").toString())
                .selectExpr(
                    "l_returnflag", "l_linestatus", "sum_qty", "sum_base_price", "count_order")
                .orderBy("l_returnflag", "l_linestatus");
        assertEquals(expected.collectAsList(), got.collectAsList());
      } finally {
        spark.stop();
      }
    } finally {
      stopAll();
    }
  }

  /** A folder laid out as Spark's launcher expects: jars/ holding every Spark jar. */
  private Path sparkHome() throws IOException {
    Path home = Files.createDirectories(tmp.resolve("spark-home/jars"));
    String cp =
        Files.readString(
                Shell.ROOT.resolve("jobs/target/spark-classpath.txt"), StandardCharsets.UTF_8)
            .trim();
    for (String jar : cp.split(File.pathSeparator)) {
      Path src = Path.of(jar);
      Files.createSymbolicLink(home.resolve(src.getFileName()), src);
    }
    return home.getParent();
  }

  private void start(Path sparkHome, Path log, String mainClass, String... args)
      throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx512m");
    cmd.addAll(Files.readAllLines(Shell.ROOT.resolve("conf/jvm-options.txt")));
    cmd.add("-cp");
    cmd.add(sparkHome.resolve("jars") + "/*");
    cmd.add(mainClass);
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd);
    Map<String, String> env = pb.environment();
    Shell.forTests(env);
    env.put("SPARK_HOME", sparkHome.toString());
    env.put("SPARK_SCALA_VERSION", "2.13");
    env.put("SPARK_LOCAL_IP", "127.0.0.1");
    env.put("JAVA_HOME", System.getProperty("java.home"));
    pb.redirectErrorStream(true).redirectOutput(log.toFile());
    daemons.add(pb.start());
  }

  private static void awaitLine(Path log, String text) throws Exception {
    if (!Poll.until(
        Duration.ofSeconds(120),
        Duration.ofMillis(200),
        () -> Files.exists(log) && Files.readString(log).contains(text))) {
      throw new IllegalStateException(
          "no '" + text + "' in " + log + ":\n" + Files.readString(log));
    }
  }

  /** The executor IDs whose start line appears in a worker's executor logs. */
  private static List<String> startLines(Path workDir) throws IOException {
    List<String> ids = new ArrayList<>();
    try (Stream<Path> files = Files.walk(workDir)) {
      for (Path p : files.filter(f -> f.getFileName().toString().equals("stderr")).toList()) {
        Matcher m = STARTED.matcher(Files.readString(p, StandardCharsets.ISO_8859_1));
        while (m.find()) {
          ids.add(m.group(1));
        }
      }
    }
    return ids;
  }

  private void stopAll() {
    for (Process p : daemons) {
      p.descendants().forEach(ProcessHandle::destroyForcibly); // the executor JVMs
      p.destroyForcibly();
    }
    for (Process p : daemons) {
      try {
        p.waitFor();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
