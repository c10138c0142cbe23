package dev.overlap.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Failures whose line once misled or hid the cause, run through the real {@code ./spark-submit.sh}:
 * each now gives one line that names the option, path, column or key at fault, with no stack trace
 * on the terminal, and leaves the user's files as they were.
 */
public class ClearLinesIT {
  @TempDir static Path tmp;
  static Path in;

  @BeforeAll
  static void inputs() throws Exception {
    in = Files.createDirectories(tmp.resolve("in"));
    SparkSession spark = TestTables.session();
    try {
      write(spark, "id as a, id * 2 as b", "mix/p1");
      write(spark, "cast(id as string) as a, id * 2 as b", "mix/p2");
      write(spark, "cast(id as decimal(10,2)) as a", "dec/p1");
      write(spark, "cast(id as double) as a", "dec/p2");
      write(spark, "cast(id as double) as a", "partial/p1");
      write(spark, "cast(id as double) as a, cast(id * 3 as double) as extra", "partial/p2");
      // Strings of 40 MB each: a task reading them needs more than a 450 MB heap.
      spark
          .range(6)
          .selectExpr("concat(cast(id as string), repeat('x', 40 << 20)) as s")
          .coalesce(1)
          .write()
          .parquet(in.resolve("huge").toString());
    } finally {
      spark.stop();
    }
    for (String d : List.of("mix", "dec", "partial")) {
      Path all = Files.createDirectories(in.resolve(d + "/all"));
      Files.copy(BadInputsIT.parquetFileOf(in.resolve(d + "/p1")), all.resolve("part-a.parquet"));
      Files.copy(BadInputsIT.parquetFileOf(in.resolve(d + "/p2")), all.resolve("part-b.parquet"));
    }
    // Data one folder down: in/nested/a and in/nested/b.
    for (String sub : List.of("a", "b")) {
      Path d = Files.createDirectories(in.resolve("nested/" + sub));
      Files.copy(BadInputsIT.parquetFileOf(in.resolve("dec/p1")), d.resolve("part-0.parquet"));
    }
    Files.writeString(tmp.resolve("a-file"), "a file, not a folder");
    Files.createSymbolicLink(tmp.resolve("dangling"), tmp.resolve("no-such-folder"));
  }

  static String p(String rel) {
    return in.resolve(rel).toString();
  }

  private static void write(SparkSession spark, String columns, String dir) {
    spark.range(100).selectExpr(columns.split(", ")).coalesce(1).write().parquet(p(dir));
  }

  /** Runs the command in tmp; checks the one line and that no file in tmp changed. */
  static String refused(int exit, List<String> parts, String... args) throws Exception {
    TreeSnapshot before = TreeSnapshot.of(tmp);
    String line = Shell.oneLine(Shell.submit(tmp, args), exit, parts.toArray(new String[0]));
    assertEquals("", TreeSnapshot.of(tmp).diff(before), "files changed by " + List.of(args));
    return line;
  }

  // --- 1: memory and Spark's local folders ---------------------------------------------------

  @Test
  void aTaskOutOfMemoryNamesDriverMemory() throws Exception {
    refused(
        52,
        List.of("features ran out of memory", "--driver-memory", "nothing was changed"),
        "features",
        "--input",
        p("huge"),
        "--output",
        "out-oom",
        "--driver-memory",
        "450m");
  }

  @Test
  void localFoldersSparkCannotCreateNameTheKey() throws Exception {
    refused(
        2,
        List.of("spark.local.dir '/proc/overlap-local'", "cannot be made"),
        "features",
        "--input",
        p("partial/p1"),
        "--output",
        "out-ld",
        "--conf",
        "spark.local.dir=/proc/overlap-local");
  }

  // --- 3: outputs that cannot be made -----------------------------------------------------------

  @Test
  void anOutputUnderARegularFile() throws Exception {
    refused(
        2,
        List.of("--output 'a-file/res' cannot be made", tmp.resolve("a-file") + "' is a file"),
        "features",
        "--input",
        p("partial/p1"),
        "--output",
        "a-file/res");
  }

  @Test
  void anOutputThroughADanglingLink() throws Exception {
    refused(
        2,
        List.of("--output 'dangling/res'", "symbolic link to", "which does not exist"),
        "features",
        "--input",
        p("partial/p1"),
        "--output",
        "dangling/res");
    refused(
        2,
        List.of("--output 'dangling' is a symbolic link to", "no-such-folder"),
        "features",
        "--input",
        p("partial/p1"),
        "--output",
        "dangling");
  }

  @Test
  void anOutputInProc() throws Exception {
    refused(
        2,
        List.of("--output '/proc/overlap/res' cannot be made", "proc file system"),
        "features",
        "--input",
        p("partial/p1"),
        "--output",
        "/proc/overlap/res");
  }

  @Test
  void anOutputInAReadOnlyFolder() throws Exception {
    Assumptions.assumeFalse("root".equals(System.getProperty("user.name")), "root writes anywhere");
    Path ro = Files.createDirectories(tmp.resolve("read-only"));
    Files.setPosixFilePermissions(ro, PosixFilePermissions.fromString("r-xr-xr-x"));
    try {
      refused(
          2,
          List.of("--output 'read-only/res' cannot be made", "is not writable"),
          "features",
          "--input",
          p("partial/p1"),
          "--output",
          "read-only/res");
    } finally {
      Files.setPosixFilePermissions(ro, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
  }

  // --- 4: an output path with non-ASCII characters ----------------------------------------------

  @Test
  void anOutputWithNonAsciiCharacters() throws Exception {
    Shell.Result r =
        Shell.submit(tmp, "features", "--input", p("partial/p1"), "--output", "outé/res");
    assertEquals(0, r.exitCode(), r.output());
    SparkSession spark = TestTables.session();
    try {
      assertEquals(100, spark.read().parquet(tmp.resolve("outé/res").toString()).count());
    } finally {
      spark.stop();
    }
  }

  // --- 5, 6, 7: inputs whose files disagree, lack columns, or lie one folder down ---------------

  @Test
  void filesThatDisagreeOnAColumnsType() throws Exception {
    refused(
        2,
        List.of(
            "files disagree on column 'a'", "bigint in part-a.parquet", "string in part-b.parquet"),
        "features",
        "--input",
        p("mix/all"),
        "--output",
        "out-mix");
    refused(
        2,
        List.of("column 'a'", "decimal(10,2) in part-a.parquet", "double in part-b.parquet"),
        "features",
        "--input",
        p("dec/all"),
        "--output",
        "out-dec");
  }

  @Test
  void aColumnInOnlySomeFilesIsWarnedAbout() throws Exception {
    Shell.Result r =
        Shell.submit(tmp, "features", "--input", p("partial/all"), "--output", "out-partial");
    assertEquals(0, r.exitCode(), r.output());
    List<String> warnings =
        r.output().lines().filter(l -> l.startsWith("overlap: warning: ")).toList();
    assertEquals(1, warnings.size(), r.output());
    String w = warnings.get(0);
    assertTrue(w.contains("'extra' is in part-b.parquet but not in part-a.parquet"), w);
    assertTrue(w.contains("--conf spark.sql.parquet.mergeSchema=true"), w);
  }

  @Test
  void dataOneFolderDownNamesTheSubfolders() throws Exception {
    refused(
        2,
        List.of(
            "input path '" + p("nested") + "' holds no Parquet files itself",
            "subfolders a, b",
            "--input " + p("nested") + "/a",
            "--input '" + p("nested") + "/*'"),
        "features",
        "--input",
        p("nested"),
        "--output",
        "out-nested");
  }

  // --- 8: a master that answers but is none ------------------------------------------------------

  @Test
  void anAddressThatAnswersButIsNoMasterFailsInSeconds() throws Exception {
    try (ServerSocket server = new ServerSocket(0)) {
      Thread t =
          new Thread(
              () -> {
                while (!server.isClosed()) {
                  try (Socket s = server.accept();
                      InputStream i = s.getInputStream()) {
                    i.transferTo(java.io.OutputStream.nullOutputStream());
                  } catch (Exception e) {
                    // closed
                  }
                }
              });
      t.setDaemon(true);
      t.start();
      String master = "spark://127.0.0.1:" + server.getLocalPort();
      long start = System.nanoTime();
      refused(
          2,
          List.of("--master " + master, "no Spark master answers"),
          "features",
          "--input",
          p("partial/p1"),
          "--master",
          master);
      long seconds = (System.nanoTime() - start) / 1_000_000_000L;
      assertTrue(seconds < 45, "took " + seconds + " s");
    }
  }

  // --- 9, 11, 12
  // -----------------------------------------------------------------------------------

  @Test
  void aScaleThatGivesNoRows() throws Exception {
    refused(
        2,
        List.of("--scale 0.0000001 gives tables of 0 rows", "smallest scale", "0.0000007"),
        "generate",
        "--scale",
        "0.0000001",
        "--output",
        "g-tiny");
  }

  @Test
  void aFileAsTheTraceFolder() throws Exception {
    refused(
        2,
        List.of("spark.overlap.trace.dir '" + tmp.resolve("a-file") + "'", "is a file"),
        "features",
        "--input",
        p("partial/p1"),
        "--output",
        "out-trace",
        "--conf",
        "spark.overlap.trace.dir=" + tmp.resolve("a-file"));
  }

  @Test
  void aFolderWithFilesGitTracksIsNotReplaced() throws Exception {
    Path repo = Files.createDirectories(tmp.resolve("checkout/docs"));
    Files.writeString(repo.resolve("guide.md"), "tracked");
    Path tree = tmp.resolve("checkout");
    for (List<String> git :
        List.of(
            List.of("git", "init", "-q"),
            List.of("git", "add", "docs/guide.md"),
            List.of(
                "git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "t"))) {
      Shell.Result r;
      try {
        r = Shell.run(git, Map.of(), tree, 60);
      } catch (java.io.IOException noGit) {
        Assumptions.abort("git is not installed");
        return;
      }
      assertEquals(0, r.exitCode(), r.output());
    }
    Set<String> skip = Set.of(".git");
    TreeSnapshot before = TreeSnapshot.of(tree, skip);
    refused(
        2,
        List.of("--output 'checkout/docs' holds files that the git work tree", "docs/guide.md"),
        "features",
        "--input",
        p("partial/p1"),
        "--output",
        "checkout/docs",
        "--overwrite-unmarked");
    refused(
        2,
        List.of("--output 'checkout' is the git work tree"),
        "features",
        "--input",
        p("partial/p1"),
        "--output",
        "checkout",
        "--overwrite-unmarked");
    assertEquals("", TreeSnapshot.of(tree, skip).diff(before));
  }
}
