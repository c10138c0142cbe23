package dev.overlap.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.jobs.cli.StagedOutput;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad and unusual command lines and inputs, run through the real {@code ./spark-submit.sh} on real
 * files. For each: the exit code, the one {@code overlap:} line the user sees (no stack trace on
 * the terminal), and that every file that existed before (inputs, an earlier output, the files
 * beside them, the project itself) is byte-for-byte unchanged.
 */
public class BadInputsIT {
  @TempDir static Path tmp;
  static Path in;

  /** Folders of the project that runs legitimately change. */
  private static final Set<String> PROJECT_CHURN = Set.of("target", "logs", ".git");

  @BeforeAll
  static void inputs() throws Exception {
    in = Files.createDirectories(tmp.resolve("in"));
    SparkSession spark = TestTables.session();
    String schema;
    try {
      Dataset<Row> li = TestTables.lineitem(spark, in.resolve("lineitem"));
      schema = li.schema().json();
      li.drop("l_quantity").write().parquet(in.resolve("no-quantity").toString());
      li.withColumn("l_shipdate", li.col("l_shipdate").cast("string"))
          .write()
          .parquet(in.resolve("date-as-string").toString());
    } finally {
      spark.stop();
    }
    Files.writeString(in.resolve("notes.txt"), "not parquet\n");
    Files.createDirectories(in.resolve("empty"));
    Files.createDirectories(in.resolve("only-hidden"));
    Files.writeString(in.resolve("only-hidden/_SUCCESS"), "");
    Path trunc = Files.createDirectories(in.resolve("truncated"));
    Path part = parquetFileOf(in.resolve("lineitem"));
    byte[] bytes = Files.readAllBytes(part);
    Files.write(
        trunc.resolve("part-00000.parquet"), java.util.Arrays.copyOf(bytes, bytes.length / 2));
    // An earlier etl output (marked) with a file beside it, and a folder of the user's own.
    Path prev = Files.createDirectories(tmp.resolve("results/etl/q1"));
    Files.writeString(prev.resolve("part-0.parquet"), "earlier q1");
    Files.writeString(tmp.resolve("results/etl/" + StagedOutput.MARKER), "job=etl\n");
    Files.writeString(tmp.resolve("results/keep.txt"), "beside the output");
    Files.createDirectories(tmp.resolve("mine"));
    Files.writeString(tmp.resolve("mine/thesis.tex"), "the user's own work");
    Files.writeString(tmp.resolve("a-file"), "a file, not a folder");
    Files.createDirectories(tmp.resolve("sub/dir"));
    Files.createSymbolicLink(tmp.resolve("link-to-input"), in.resolve("lineitem"));
    // A Delta table: a Parquet file and the first commit of its log, which adds that file.
    Path delta = Files.createDirectories(tmp.resolve("delta-table/_delta_log"));
    Files.copy(part, tmp.resolve("delta-table/part-00000.parquet"));
    Files.writeString(
        delta.resolve("00000000000000000000.json"),
        "{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}\n"
            + "{\"metaData\":{\"id\":\"7d3c2b1a-0f9e-4d8c-b7a6-5e4f3d2c1b0a\",\"format\":"
            + "{\"provider\":\"parquet\",\"options\":{}},\"schemaString\":\""
            + schema.replace("\"", "\\\"")
            + "\",\"partitionColumns\":[],\"configuration\":{}}}\n"
            + "{\"add\":{\"path\":\"part-00000.parquet\",\"partitionValues\":{},\"size\":"
            + bytes.length
            + ",\"modificationTime\":1700000000000,\"dataChange\":true}}\n");
    Path gen = Files.createDirectories(tmp.resolve("tpch/lineitem"));
    Files.writeString(gen.resolve("part-0.parquet"), "generated");
    Files.writeString(tmp.resolve("tpch/" + StagedOutput.MARKER), "job=generate\n");
  }

  static Path parquetFileOf(Path dir) throws Exception {
    try (var s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".parquet")).findFirst().orElseThrow();
    }
  }

  @AfterAll
  static void nothingLeftBehind() throws Exception {
    try (var s = Files.walk(tmp)) {
      List<Path> staged = s.filter(p -> p.getFileName().toString().contains(".overlap-")).toList();
      assertEquals(List.of(), staged, "staging or previous folders left behind");
    }
  }

  /** Runs the command in {@code dir}; checks exit code, the one line, and that nothing changed. */
  static String refused(Path dir, int exit, String line, String... args) throws Exception {
    TreeSnapshot user = TreeSnapshot.of(tmp);
    TreeSnapshot project = TreeSnapshot.of(Shell.ROOT, PROJECT_CHURN);
    Shell.Result r = Shell.submit(dir, args);
    String out = r.output();
    assertEquals(exit, r.exitCode(), out);
    List<String> errors = new ArrayList<>();
    // A terminal shows what follows a carriage return over what preceded it (a progress bar).
    for (String l : out.split("[\r\n]")) {
      if (l.startsWith("overlap: ") || l.startsWith("spark-submit.sh: ")) {
        errors.add(l);
      }
    }
    assertEquals(1, errors.size(), "one error line expected:\n" + out);
    assertTrue(errors.get(0).contains(line), "expected '" + line + "' in:\n" + out);
    assertFalse(out.contains("\tat "), "a stack trace reached the terminal:\n" + out);
    assertFalse(out.contains("Exception in thread"), out);
    assertEquals("", TreeSnapshot.of(tmp).diff(user), "user files changed by: " + List.of(args));
    assertEquals("", TreeSnapshot.of(Shell.ROOT, PROJECT_CHURN).diff(project), "project changed");
    return errors.get(0);
  }

  static String refused(int exit, String line, String... args) throws Exception {
    return refused(tmp, exit, line, args);
  }

  static String li() {
    return in.resolve("lineitem").toString();
  }

  // --- outputs that can only be mistakes ---------------------------------------------------------

  @Test
  void theProjectFolderAsCurrentDirectory() throws Exception {
    refused(
        Shell.ROOT,
        2,
        "--output '.' is the current directory '" + Shell.ROOT.toRealPath() + "'",
        "etl",
        "--input",
        li(),
        "--output",
        ".",
        "--overwrite");
  }

  @Test
  void aFolderAboveTheCurrentDirectory() throws Exception {
    refused(
        tmp.resolve("sub/dir"),
        2,
        "--output '..' holds the current directory",
        "etl",
        "--input",
        li(),
        "--output",
        "..",
        "--overwrite");
  }

  @Test
  void theProjectFolder() throws Exception {
    refused(
        2,
        "is the Overlap project folder",
        "etl",
        "--input",
        li(),
        "--output",
        Shell.ROOT.toString(),
        "--overwrite");
  }

  @Test
  void theRootFolder() throws Exception {
    refused(
        2,
        "--output '/' is the root folder",
        "etl",
        "--input",
        li(),
        "--output",
        "/",
        "--overwrite");
  }

  @Test
  void theHomeFolder() throws Exception {
    String home = System.getProperty("user.home");
    refused(2, "is your home folder", "etl", "--input", li(), "--output", home, "--overwrite");
  }

  @Test
  void theInputItself() throws Exception {
    refused(2, "is the input", "etl", "--input", li(), "--output", li(), "--overwrite-unmarked");
  }

  @Test
  void aFolderInsideTheInput() throws Exception {
    refused(
        2,
        "is inside the input",
        "etl",
        "--input",
        li(),
        "--output",
        li() + "/q",
        "--overwrite-unmarked");
  }

  @Test
  void aFolderHoldingTheInput() throws Exception {
    refused(
        2,
        "holds the input",
        "etl",
        "--input",
        li(),
        "--output",
        in.toString(),
        "--overwrite-unmarked");
  }

  @Test
  void aFolderHoldingAGlobbedInput() throws Exception {
    refused(
        2,
        "holds the input",
        "etl",
        "--input",
        in + "/line*",
        "--output",
        in.toString(),
        "--overwrite-unmarked");
  }

  @Test
  void theInputThroughASymbolicLink() throws Exception {
    refused(
        2,
        "is the input",
        "etl",
        "--input",
        li(),
        "--output",
        "link-to-input",
        "--overwrite-unmarked");
  }

  @Test
  void anExistingFolderThatIsNotAnOverlapOutput() throws Exception {
    refused(
        2,
        "output path 'mine' exists and is not an Overlap output",
        "etl",
        "--input",
        li(),
        "--output",
        "mine",
        "--overwrite");
  }

  @Test
  void anExistingFileAsOutput() throws Exception {
    refused(
        2, "is not an Overlap output", "etl", "--input", li(), "--output", "a-file", "--overwrite");
  }

  @Test
  void anEarlierOutputWithoutOverwrite() throws Exception {
    refused(
        2,
        "output path 'results/etl' exists; pass --overwrite to replace it",
        "etl",
        "--input",
        li(),
        "--output",
        "results/etl");
  }

  @Test
  void anotherJobsOutput() throws Exception {
    refused(
        2,
        "holds the result of generate, not of etl",
        "etl",
        "--input",
        li(),
        "--output",
        "tpch",
        "--overwrite");
  }

  // --- strict arguments --------------------------------------------------------------------------

  @Test
  void anOptionAsTheValueOfOutput() throws Exception {
    refused(
        2,
        "--output needs a value, but the next argument is the option '--overwrite'",
        "etl",
        "--output",
        "--overwrite");
  }

  @Test
  void scaleDoesNotApplyToEtl() throws Exception {
    refused(2, "--scale is not an option of etl", "etl", "--scale", "5", "--vocabulary", "3");
  }

  @Test
  void vocabularyDoesNotApplyToEtl() throws Exception {
    refused(2, "--vocabulary is not an option of etl", "etl", "--vocabulary", "3");
  }

  @Test
  void anUnknownEngine() throws Exception {
    refused(2, "--engine must be overlap or spark-sql, got 'gpu'", "etl", "--engine", "gpu");
  }

  @Test
  void engineDoesNotApplyToFeatures() throws Exception {
    refused(
        2,
        "--engine is not an option of features (it is one of etl)",
        "features",
        "--engine",
        "spark-sql");
  }

  @Test
  void aRepeatedOption() throws Exception {
    refused(2, "--output is given twice", "etl", "--output", "a", "--output", "b");
  }

  @Test
  void aStrayWord() throws Exception {
    refused(2, "unexpected argument 'lineitem'", "etl", "--input", li(), "lineitem");
  }

  @Test
  void aMisspelledOption() throws Exception {
    refused(2, "unknown option '--ouptut' for etl; did you mean --output?", "etl", "--ouptut", "x");
  }

  @Test
  void scaleNotANumber() throws Exception {
    // Over generate's own earlier output, which a failed run must leave as it was.
    refused(
        2,
        "--scale must be a number greater than 0",
        "generate",
        "--scale",
        "abc",
        "--output",
        "tpch",
        "--overwrite");
  }

  @Test
  void scaleZero() throws Exception {
    refused(2, "got '0'", "generate", "--scale", "0", "--output", "g0");
  }

  @Test
  void scaleNegative() throws Exception {
    refused(2, "got '-1'", "generate", "--scale", "-1", "--output", "g1");
  }

  @Test
  void scaleAboveTpchsLargest() throws Exception {
    refused(2, "at most 100000", "generate", "--scale", "1e9", "--output", "g2");
  }

  @Test
  void scaleThatDoesNotFitTheDisk() throws Exception {
    refused(2, "--scale 100000 needs about", "generate", "--scale", "100000", "--output", "g3");
  }

  @Test
  void generateWithoutScale() throws Exception {
    refused(2, "generate needs --scale", "generate", "--output", "g4");
  }

  @Test
  void vocabularyNegative() throws Exception {
    refused(
        2,
        "--vocabulary must be a whole number from 1",
        "features",
        "--input",
        li(),
        "--vocabulary",
        "-5");
  }

  @Test
  void vocabularyZero() throws Exception {
    refused(2, "got '0'", "features", "--input", li(), "--vocabulary", "0");
  }

  @Test
  void vocabularyNotANumber() throws Exception {
    refused(2, "got 'many'", "features", "--input", li(), "--vocabulary", "many");
  }

  @Test
  void anUnknownJob() throws Exception {
    refused(2, "unknown job 'report'; jobs: generate, etl, features", "report");
  }

  @Test
  void masterWithoutAValue() throws Exception {
    refused(
        2,
        "--master needs a value, but the next argument is the option '--conf'",
        "etl",
        "--master",
        "--conf",
        "a=b");
  }

  @Test
  void confWithoutKeyValue() throws Exception {
    refused(
        2,
        "--conf needs key=value, got 'spark.executor.memory'",
        "etl",
        "--conf",
        "spark.executor.memory");
  }

  @Test
  void driverMemoryNotASize() throws Exception {
    refused(2, "--driver-memory needs a size such as 4g", "etl", "--driver-memory", "lots");
  }

  @Test
  void executorCoresZero() throws Exception {
    refused(
        2, "--executor-cores needs a whole number of 1 or more", "etl", "--executor-cores", "0");
  }

  @Test
  void helpForOneJob() throws Exception {
    Shell.Result r = Shell.submit(tmp, "etl", "--help");
    assertEquals(0, r.exitCode(), r.output());
    assertTrue(r.output().startsWith("usage: ./spark-submit.sh etl"), r.output());
  }

  // --- inputs ------------------------------------------------------------------------------------

  @Test
  void aMissingInput() throws Exception {
    refused(
        2, "input path 'no/such/lineitem' does not exist", "etl", "--input", "no/such/lineitem");
  }

  @Test
  void aGlobThatMatchesNothing() throws Exception {
    refused(2, "does not exist", "etl", "--input", in + "/nothing*");
  }

  @Test
  void aGlobIsAccepted() throws Exception {
    // Accepted as input: the run goes on to the output check, which refuses the earlier output.
    refused(
        2,
        "output path 'results/etl' exists",
        "etl",
        "--input",
        in + "/line*",
        "--output",
        "results/etl");
  }

  @Test
  void aDeltaTableOrAFileOfItIsRefusedBeforeAnyWork() throws Exception {
    Path table = tmp.resolve("delta-table");
    String line =
        refused(
            2, "is a Delta table", "etl", "--input", table.toString(), "--output", "from-delta");
    assertEquals(
        "overlap: --input '"
            + table
            + "' is a Delta table (it has a _delta_log folder): reading its files as plain Parquet"
            + " would count files the table removed; add --format delta to read it as a table",
        line);
    refused(
        2,
        "--input '" + table.resolve("part-00000.parquet") + "' is inside the Delta table '" + table,
        "features",
        "--input",
        table.resolve("part-00000.parquet").toString(),
        "--output",
        "from-delta");
  }

  @Test
  void anEmptyInputFolder() throws Exception {
    refused(
        2,
        "input path '" + in.resolve("empty") + "' holds no data files",
        "etl",
        "--input",
        in.resolve("empty").toString());
  }

  @Test
  void anInputOfHiddenFilesOnly() throws Exception {
    refused(2, "holds no data files", "etl", "--input", in.resolve("only-hidden").toString());
  }

  @Test
  void aFileSystemWithoutItsConnector() throws Exception {
    refused(2, "add its connector jars to the job", "etl", "--input", "s3a://bucket/lineitem");
  }

  @Test
  void aMasterThatDoesNotAnswerFailsInSeconds() throws Exception {
    long start = System.nanoTime();
    refused(
        2,
        "cannot reach the Spark master spark://127.0.0.1:1 (tried 127.0.0.1:1:",
        "etl",
        "--input",
        li(),
        "--master",
        "spark://127.0.0.1:1");
    long seconds = (System.nanoTime() - start) / 1_000_000_000L;
    assertTrue(seconds < 40, "took " + seconds + " s");
  }

  // --- inputs Spark has to open ------------------------------------------------------------------

  @Test
  void aTextFileAsInput() throws Exception {
    String line =
        refused(
            2,
            "is not a readable Parquet file",
            "etl",
            "--input",
            in.resolve("notes.txt").toString(),
            "--output",
            "results/etl",
            "--overwrite");
    assertTrue(line.contains("notes.txt"), line);
  }

  @Test
  void aTruncatedParquetFileLeavesTheEarlierOutput() throws Exception {
    String line =
        refused(
            2,
            "is not a readable Parquet file",
            "etl",
            "--input",
            in.resolve("truncated").toString(),
            "--output",
            "results/etl",
            "--overwrite");
    assertTrue(line.contains("part-00000.parquet"), line);
  }

  @Test
  void aMissingColumnLeavesTheEarlierOutput() throws Exception {
    refused(
        2,
        "l_quantity",
        "etl",
        "--input",
        in.resolve("no-quantity").toString(),
        "--output",
        "results/etl",
        "--overwrite");
  }

  @Test
  void aColumnOfAnUnusableType() throws Exception {
    String line =
        refused(
            2,
            "l_shipdate",
            "etl",
            "--input",
            in.resolve("date-as-string").toString(),
            "--output",
            "results/etl",
            "--overwrite");
    assertTrue(line.contains("string"), line);
  }

  @Test
  void aFailedRunNamesItsLogFile() throws Exception {
    // A run-time failure (not the user's input): exit 1, and the line names the log file.
    String line =
        refused(
            1,
            "stack trace in ",
            "etl",
            "--input",
            li(),
            "--output",
            "out-oom",
            "--conf",
            "spark.plugins=dev.overlap.NoSuchPlugin");
    Matcher m = Pattern.compile("stack trace in (\\S+)\\)").matcher(line);
    assertTrue(m.find(), line);
    assertTrue(
        Files.readString(Path.of(m.group(1))).contains("\tat "), "no stack trace in the log");
  }
}
