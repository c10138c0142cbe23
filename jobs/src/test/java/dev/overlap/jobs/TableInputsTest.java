package dev.overlap.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.overlap.jobs.cli.ErrorLines;
import dev.overlap.jobs.cli.JobArgs;
import dev.overlap.jobs.cli.JobPaths;
import dev.overlap.jobs.cli.PreFlight;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Delta or Iceberg table's folder given as {@code --input} is refused before any work, with one
 * line that names the table, whether the input is the table, a partition folder or a file of it, or
 * a glob over it; for each, the line and exit code {@link Main} gives, and that nothing was
 * written. A Parquet folder with a file merely named like the Delta log is read as ever.
 */
public class TableInputsTest {
  @TempDir static Path tmp;
  static SparkSession spark;
  static Path delta;
  static Path iceberg;
  static Path plain;

  private static final String DELTA_END =
      " (it has a _delta_log folder): reading its files as plain Parquet would count files the"
          + " table removed; add --format delta to read it as a table";

  /** The end of the line for an input inside the Delta table {@code table}. */
  private static String insideDelta(Path table) {
    return " (it has a _delta_log folder): reading its files as plain Parquet would count files"
        + " the table removed; give --input '"
        + table
        + "' --format delta to read the table";
  }

  private static final String ICEBERG_END =
      " (it has a metadata folder with *.metadata.json files): reading its files as plain Parquet"
          + " would count files the table removed; give a Parquet folder, or export the table's"
          + " current snapshot to Parquet first (Iceberg tables are not read by the jobs yet)";

  @BeforeAll
  static void tables() throws Exception {
    spark = TestTables.session();
    Dataset<Row> rows = spark.sql("select id, id * 0.5 as x, id % 2 as part from range(200)");
    // A Delta table: Spark's partitioned Parquet, and the log's first commit adding its files.
    delta = tmp.resolve("delta");
    rows.write().partitionBy("part").parquet(delta.toString());
    Files.delete(delta.resolve("_SUCCESS"));
    Files.createDirectories(delta.resolve("_delta_log"));
    Files.writeString(
        delta.resolve("_delta_log/00000000000000000000.json"), deltaCommit(rows, delta));
    // An Iceberg table: data under data/, the table's metadata file under metadata/.
    iceberg = tmp.resolve("iceberg");
    rows.write().parquet(iceberg.resolve("data").toString());
    Files.createDirectories(iceberg.resolve("metadata"));
    Files.writeString(
        iceberg.resolve("metadata/v1.metadata.json"),
        "{\"format-version\":2,\"table-uuid\":\"5f8a1c9e-0d1b-4f53-9a57-2b1f0e6c7d11\","
            + "\"location\":\""
            + iceberg.toUri()
            + "\",\"last-sequence-number\":0,\"last-updated-ms\":1700000000000,"
            + "\"last-column-id\":3,\"current-schema-id\":0,\"schemas\":[{\"type\":\"struct\","
            + "\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"id\",\"required\":true,"
            + "\"type\":\"long\"},{\"id\":2,\"name\":\"x\",\"required\":true,\"type\":\"double\"},"
            + "{\"id\":3,\"name\":\"part\",\"required\":true,\"type\":\"long\"}]}],"
            + "\"default-spec-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
            + "\"last-partition-id\":999,\"default-sort-order-id\":0,"
            + "\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],\"properties\":{},"
            + "\"current-snapshot-id\":-1,\"refs\":{},\"snapshots\":[],\"snapshot-log\":[],"
            + "\"metadata-log\":[]}\n");
    Files.writeString(iceberg.resolve("metadata/version-hint.text"), "1\n");
    // Plain Parquet beside a file named like the Delta log, and a metadata folder of no table.
    plain = tmp.resolve("plain");
    rows.write().parquet(plain.toString());
    Files.writeString(plain.resolve("_delta_log.txt"), "notes on a Delta log\n");
    Files.createDirectories(plain.resolve("metadata"));
    Files.writeString(plain.resolve("metadata/schema.json"), "{}\n");
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  /** Delta's first commit: protocol, table metadata, and an add action for each data file. */
  private static String deltaCommit(Dataset<Row> rows, Path table) throws Exception {
    StringBuilder log = new StringBuilder();
    log.append("{\"commitInfo\":{\"timestamp\":1700000000000,\"operation\":\"WRITE\",")
        .append("\"operationParameters\":{\"mode\":\"ErrorIfExists\",")
        .append("\"partitionBy\":\"[\\\"part\\\"]\"},\"isBlindAppend\":true}}\n");
    log.append("{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}\n");
    String schema = rows.schema().json().replace("\\", "\\\\").replace("\"", "\\\"");
    log.append("{\"metaData\":{\"id\":\"0b6e3c55-7a1f-4a8e-9a52-1c3d2e4f5a6b\",")
        .append("\"format\":{\"provider\":\"parquet\",\"options\":{}},")
        .append("\"schemaString\":\"")
        .append(schema)
        .append("\",\"partitionColumns\":[\"part\"],\"configuration\":{},")
        .append("\"createdTime\":1700000000000}}\n");
    for (Path f : parquetFiles(table)) {
      String rel = table.relativize(f).toString();
      log.append("{\"add\":{\"path\":\"")
          .append(rel)
          .append("\",\"partitionValues\":{\"part\":\"")
          .append(rel.substring("part=".length(), rel.indexOf('/')))
          .append("\"},\"size\":")
          .append(Files.size(f))
          .append(",\"modificationTime\":1700000000000,\"dataChange\":true}}\n");
    }
    return log.toString();
  }

  private static List<Path> parquetFiles(Path dir) throws Exception {
    try (Stream<Path> s = Files.walk(dir)) {
      return s.filter(p -> p.getFileName().toString().endsWith(".parquet")).sorted().toList();
    }
  }

  /**
   * Runs the job as {@link Main#main} does, short of ending the JVM: its one line and exit code;
   * checks that nothing under the test's folder changed and that the output was not made.
   */
  private static void refused(String line, String... args) throws Exception {
    TreeSnapshot before = TreeSnapshot.of(tmp, java.util.Set.of());
    Path out = tmp.resolve("out");
    List<String> all = new ArrayList<>(List.of(args));
    if (!all.contains("--fit-only")) {
      all.addAll(List.of("--output", out.toString()));
    }
    Throwable t = assertThrows(Throwable.class, () -> Main.run(all.toArray(new String[0])));
    ErrorLines.Line l = ErrorLines.of(t, args[0], ErrorLines.Context.NONE);
    assertEquals(line, "overlap: " + l.text());
    assertEquals(2, l.exit(), l.text());
    assertFalse(Files.exists(out), "the output was made");
    assertEquals("", TreeSnapshot.of(tmp, java.util.Set.of()).diff(before), "files changed");
  }

  @Test
  void aDeltaTableFolderIsRefused() throws Exception {
    String in = delta.toString();
    String line = "overlap: --input '" + in + "' is a Delta table" + DELTA_END;
    refused(line, "etl", "--input", in);
    refused(line, "features", "--input", in);
  }

  @Test
  void aPartitionFolderOrAFileInsideADeltaTableIsRefused() throws Exception {
    String part = delta.resolve("part=1").toString();
    refused(
        "overlap: --input '"
            + part
            + "' is inside the Delta table '"
            + delta
            + "'"
            + insideDelta(delta),
        "features",
        "--input",
        part);
    String file = parquetFiles(delta.resolve("part=0")).get(0).toString();
    refused(
        "overlap: --input '"
            + file
            + "' is inside the Delta table '"
            + delta
            + "'"
            + insideDelta(delta),
        "etl",
        "--input",
        file);
  }

  @Test
  void aGlobOverADeltaTablesPartitionsIsRefused() throws Exception {
    String glob = delta + "/part=*";
    refused(
        "overlap: --input '"
            + glob
            + "' matches files of the Delta table '"
            + delta
            + "'"
            + insideDelta(delta),
        "etl",
        "--input",
        glob);
  }

  @Test
  void featuresFitOnlyRefusesADeltaTableToo() throws Exception {
    String in = delta.toString();
    refused(
        "overlap: --input '" + in + "' is a Delta table" + DELTA_END,
        "features",
        "--fit-only",
        "--save-model",
        tmp.resolve("out").toString(),
        "--input",
        in);
  }

  @Test
  void anIcebergTableOrItsDataFolderIsRefused() throws Exception {
    String in = iceberg.toString();
    refused(
        "overlap: --input '" + in + "' is an Iceberg table" + ICEBERG_END, "etl", "--input", in);
    String data = iceberg.resolve("data").toString();
    refused(
        "overlap: --input '" + data + "' is inside the Iceberg table '" + in + "'" + ICEBERG_END,
        "features",
        "--input",
        data);
  }

  @Test
  void formatDeltaTakesOnlyADeltaTablesOwnFolder() throws Exception {
    String part = delta.resolve("part=1").toString();
    refused(
        "overlap: --input '"
            + part
            + "' is inside the Delta table '"
            + delta
            + "': --format delta reads a table whole; give --input '"
            + delta
            + "'",
        "etl",
        "--input",
        part,
        "--format",
        "delta");
    String in = plain.toString();
    refused(
        "overlap: --input '"
            + in
            + "' is not a Delta table (it has no _delta_log folder): drop --format delta to read"
            + " it as Parquet, or give the table's folder",
        "features",
        "--input",
        in,
        "--format",
        "delta");
    String glob = delta + "/part=*";
    refused(
        "overlap: --input '"
            + glob
            + "' is a glob: --format delta reads one Delta table, so give its folder (the one"
            + " holding _delta_log)",
        "etl",
        "--input",
        glob,
        "--format",
        "delta");
    String ice = iceberg.toString();
    refused(
        "overlap: --input '" + ice + "' is an Iceberg table" + ICEBERG_END,
        "etl",
        "--input",
        ice,
        "--format",
        "delta");
  }

  @Test
  void formatAndVersionAreChecked() throws Exception {
    String in = delta.toString();
    refused(
        "overlap: --format must be parquet or delta, got 'detla'; did you mean delta?",
        "etl",
        "--input",
        in,
        "--format",
        "detla");
    refused(
        "overlap: --version reads a Delta table as it was at that version: give --format delta"
            + " too",
        "etl",
        "--input",
        plain.toString(),
        "--version",
        "1");
    refused(
        "overlap: --version must be a whole number of 0 or more (a version of the Delta table),"
            + " got '-1'",
        "features",
        "--input",
        in,
        "--format",
        "delta",
        "--version",
        "-1");
    refused(
        "overlap: --format delta reads the Delta table that --input names: give --input"
            + " TABLE_FOLDER",
        "etl",
        "--format",
        "delta");
  }

  @Test
  void formatDeltaWithoutDeltasExtensionIsRefusedBeforeSparkStarts() throws Exception {
    // This JVM has delta-spark's classes but no spark.sql.extensions among its settings.
    String in = delta.toString();
    refused(
        "overlap: --format delta needs Delta's session extension, but spark.sql.extensions is not"
            + " set: give --conf spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension"
            + " (./spark-submit.sh sets it with --format delta; list your own extensions after it,"
            + " separated by commas)",
        "etl",
        "--input",
        in,
        "--format",
        "delta");
  }

  @Test
  void plainParquetBesideNamesLikeATablesMarksIsRead() {
    String in = plain.toString();
    JobPaths paths =
        new JobPaths(spark.sparkContext().hadoopConfiguration(), Paths.get(""), Optional.empty());
    for (String job : List.of("etl", "features")) {
      JobArgs a =
          JobArgs.parse(
              new String[] {job, "--input", in, "--output", tmp.resolve("plain-out").toString()});
      PreFlight.output(a, paths);
      assertEquals(
          Optional.empty(), PreFlight.inputFooters(a, paths).partialColumns(), "footers read");
      assertEquals(1, paths.input(in).size());
    }
  }
}
