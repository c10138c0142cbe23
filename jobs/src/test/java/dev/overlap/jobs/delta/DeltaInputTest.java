package dev.overlap.jobs.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.plan.ColumnarPlans;
import dev.overlap.features.FeatureEncoderModel;
import dev.overlap.jobs.cli.JobSummary;
import dev.overlap.jobs.cli.UsageException;
import dev.overlap.jobs.etl.EtlInputs;
import dev.overlap.jobs.etl.EtlJob;
import dev.overlap.jobs.features.FeaturesJob;
import dev.overlap.jobs.features.ModelOptions;
import dev.overlap.jobs.features.OutputOptions;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.Set;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * etl and features over real Delta tables (written here by delta-spark) give what the same queries
 * give over Spark's own read of the table, {@code spark.read.format("delta")}: a plain table, one
 * after a delete with deletion vectors, one with a column renamed under column mapping, one after a
 * schema evolution, one after an update, an older version (time travel), and a table overwritten by
 * a second version, whose first version's files stay in its folder and are not counted. Which way
 * each is read (plain Parquet files for the GPU's scan, or Spark's Delta reader) is checked on the
 * input's plan and in the summary's line.
 */
public class DeltaInputTest {
  @TempDir static Path tmp;
  static SparkSession spark;
  static Dataset<Row> lineitem;
  static Path plain;
  static Path vectors;
  static Path renamed;
  static Path evolved;
  static Path updated;
  static Path overwritten;

  static final String DELETED = "l_orderkey % 3 = 0";
  static final String FILES_ROUTE = "read as plain Parquet files";
  static final String DELTA_READER = "read by Spark's Delta reader";

  @BeforeAll
  static void tables() {
    spark = DeltaTables.session(true);
    lineitem = DeltaTables.lineitem(spark, 0.001, 3).cache();
    plain = tmp.resolve("plain");
    DeltaTables.write(lineitem, plain);
    vectors = tmp.resolve("vectors");
    DeltaTables.withDeletionVectors(lineitem, vectors, DELETED);
    renamed = tmp.resolve("renamed");
    DeltaTables.withRenamedColumn(lineitem, renamed);
    // Version 0 without l_tax; version 1 appends rows with it, merging it into the schema.
    evolved = tmp.resolve("evolved");
    DeltaTables.write(lineitem.where("l_orderkey % 2 = 1").drop("l_tax"), evolved);
    lineitem
        .where("l_orderkey % 2 = 0")
        .write()
        .format("delta")
        .mode("append")
        .option("mergeSchema", "true")
        .save(evolved.toString());
    updated = tmp.resolve("updated");
    DeltaTables.write(lineitem, updated);
    DeltaTables.sql(spark, updated, "UPDATE {t} SET l_discount = 0.10 WHERE l_orderkey % 4 = 0");
    overwritten = tmp.resolve("overwritten");
    DeltaTables.write(lineitem, overwritten);
    lineitem
        .where("l_orderkey % 5 = 0")
        .write()
        .format("delta")
        .mode("overwrite")
        .save(overwritten.toString());
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  /** Spark's own read of the table, at {@code version} or its latest. */
  private static Dataset<Row> sparks(Path table, OptionalLong version) {
    var reader = spark.read().format("delta");
    if (version.isPresent()) {
      reader = reader.option("versionAsOf", version.getAsLong());
    }
    return reader.load(table.toString());
  }

  /**
   * Runs etl over the table and checks its output against Spark SQL's Q1 and Q6 over Spark's read
   * of the table; returns the summary's text.
   */
  private static String etlEqualsSpark(String name, Path table, OptionalLong version) {
    Path out = tmp.resolve("out-" + name);
    JobSummary summary = new JobSummary("etl");
    EtlJob.run(
        spark,
        new JobInput(table.toString(), true, version),
        out.toString(),
        EtlJob.OVERLAP,
        1,
        summary);
    String view = "truth_" + name.replace('-', '_');
    sparks(table, version).createOrReplaceTempView(view);
    EtlInputs.assertSame(
        spark.sql(String.format(Locale.ROOT, EtlInputs.Q1, view)),
        spark.read().parquet(out.resolve("q1").toString()).orderBy("l_returnflag", "l_linestatus"),
        name + " Q1");
    EtlInputs.assertSame(
        spark.sql(String.format(Locale.ROOT, EtlInputs.Q6, view)),
        spark.read().parquet(out.resolve("q6").toString()),
        name + " Q6");
    return summary.render(0, 1);
  }

  /** Files as paths, whatever form of URI names them. */
  private static Set<String> paths(String[] files) {
    Set<String> out = new java.util.TreeSet<>();
    for (String f : files) {
      out.add(new org.apache.hadoop.fs.Path(f).toUri().getPath());
    }
    return out;
  }

  private static SparkPlan plan(Dataset<Row> df) {
    return ((org.apache.spark.sql.classic.Dataset<Row>) df).queryExecution().executedPlan();
  }

  @Test
  void aPlainTablesFilesGoToTheGpusParquetScan() {
    String text = etlEqualsSpark("plain", plain, OptionalLong.empty());
    assertTrue(text.contains("version 0 (the latest), 3 files, " + FILES_ROUTE), text);
    DeltaInput in = DeltaInput.read(spark, plain.toString(), OptionalLong.empty());
    assertTrue(in.asParquetFiles());
    ColumnarPlans.Columnar c = ColumnarPlans.columnar(plan(in.rows()));
    assertNotNull(c);
    assertNotNull(c.parquetScan(), "a plain Parquet scan, which the GPU path decodes");
    assertEquals(
        paths(sparks(plain, OptionalLong.empty()).inputFiles()), paths(in.rows().inputFiles()));
  }

  @Test
  void aTableWithDeletionVectorsIsReadBySparksDeltaReader() throws Exception {
    String text = etlEqualsSpark("vectors", vectors, OptionalLong.empty());
    assertTrue(text.contains(DELTA_READER), text);
    assertTrue(
        text.matches(
            "(?s).*: \\d+ of \\d+ files have deletion vectors .*, which the GPU's Parquet scan"
                + " applies to the files it decodes.*"),
        text);
    DeltaInput in = DeltaInput.read(spark, vectors.toString(), OptionalLong.empty());
    assertFalse(in.asParquetFiles());
    // Spark's filter of the rows the vectors mark over Delta's scan: not a plain columnar plan
    // (the executor takes the scan under it: DeletionVectorScansTest, DeltaInputGpuTest).
    assertNull(ColumnarPlans.columnar(plan(in.rows())));
    long deleted = lineitem.where(DELETED).count();
    assertTrue(deleted > 0);
    assertEquals(lineitem.count() - deleted, in.rows().count());
    // The files still hold the deleted rows: read as plain Parquet, they would be counted.
    String[] files =
        DeltaTables.parquetFiles(vectors).stream().map(Path::toString).toArray(String[]::new);
    assertEquals(lineitem.count(), spark.read().parquet(files).count());
  }

  @Test
  void aRenamedColumnUnderColumnMappingIsReadBySparksDeltaReader() {
    String text = etlEqualsSpark("renamed", renamed, OptionalLong.empty());
    assertTrue(text.contains(DELTA_READER + ": its columns are"), text);
    assertTrue(text.contains("(column mapping, mode name)"), text);
    DeltaInput in = DeltaInput.read(spark, renamed.toString(), OptionalLong.empty());
    ColumnarPlans.Columnar c = ColumnarPlans.columnar(plan(in.rows()));
    assertNotNull(c, "Spark's vectorized reader: a columnar input");
    assertNull(c.parquetScan(), "not the GPU's Parquet scan, which reads columns by file names");
    // The files name the column as it was written.
    List<String> inFiles = List.of(spark.read().parquet(renamed.toString()).columns());
    assertTrue(inFiles.contains("tax") && !inFiles.contains("l_tax"), inFiles.toString());
  }

  @Test
  void aSchemaEvolutionsOlderFilesGiveNullsForTheNewColumn() {
    String text = etlEqualsSpark("evolved", evolved, OptionalLong.empty());
    assertTrue(text.contains("version 1 (the latest)"), text);
    assertTrue(text.contains(FILES_ROUTE), text);
    Dataset<Row> rows = DeltaInput.read(spark, evolved.toString(), OptionalLong.empty()).rows();
    assertEquals(lineitem.where("l_orderkey % 2 = 1").count(), rows.where("l_tax is null").count());
  }

  @Test
  void anUpdatesRewrittenFilesAreReadAndTheirOlderOnesAreNot() {
    String text = etlEqualsSpark("updated", updated, OptionalLong.empty());
    assertTrue(text.contains("version 1 (the latest)") && text.contains(FILES_ROUTE), text);
    Dataset<Row> rows = DeltaInput.read(spark, updated.toString(), OptionalLong.empty()).rows();
    assertEquals(lineitem.count(), rows.count());
    assertEquals(
        lineitem.where("l_orderkey % 4 = 0").count(),
        rows.where("l_discount = 0.10").where("l_orderkey % 4 = 0").count());
  }

  @Test
  void anOlderVersionIsReadWithVersion() {
    String text = etlEqualsSpark("updated-v0", updated, OptionalLong.of(0));
    assertTrue(text.contains("version 0 (--version)") && text.contains(FILES_ROUTE), text);
    // Version 0 is the rows before the update, not the latest ones.
    Dataset<Row> v0 = DeltaInput.read(spark, updated.toString(), OptionalLong.of(0)).rows();
    assertEquals(0, v0.except(lineitem).count());
    assertEquals(0, lineitem.except(v0).count());
    UsageException e =
        assertThrows(
            UsageException.class,
            () -> DeltaInput.read(spark, updated.toString(), OptionalLong.of(7)));
    assertEquals(
        "--version 7: the Delta table '"
            + updated
            + "' has versions up to 1; give one of them, or drop --version for the latest",
        e.getMessage());
  }

  @Test
  void anOverwrittenVersionsFilesAreNotCounted() throws Exception {
    String text = etlEqualsSpark("overwritten", overwritten, OptionalLong.empty());
    assertTrue(text.contains(FILES_ROUTE), text);
    long latest = lineitem.where("l_orderkey % 5 = 0").count();
    assertEquals(
        latest,
        DeltaInput.read(spark, overwritten.toString(), OptionalLong.empty()).rows().count());
    // Both versions' files are in the folder: read as plain Parquet, it has every row twice over.
    assertEquals(lineitem.count() + latest, spark.read().parquet(overwritten.toString()).count());
    long q1Rows =
        spark
            .read()
            .parquet(tmp.resolve("out-overwritten/q1").toString())
            .agg(org.apache.spark.sql.functions.sum("count_order"))
            .first()
            .getLong(0);
    long q1Latest =
        lineitem.where("l_orderkey % 5 = 0 and l_shipdate <= date '1998-09-02'").count();
    assertEquals(q1Latest, q1Rows);
  }

  @Test
  void featuresOverADeletionVectorTableEqualFeaturesOverItsRowsAsParquet() {
    // A narrow table of a number, a string and a date column: the features job's three kinds.
    Dataset<Row> narrow = lineitem.select("l_orderkey", "l_quantity", "l_returnflag", "l_shipdate");
    Path table = tmp.resolve("narrow-vectors");
    DeltaTables.withDeletionVectors(narrow, table, DELETED);
    Path copy = tmp.resolve("narrow-vectors-as-parquet");
    sparks(table, OptionalLong.empty()).write().parquet(copy.toString());
    JobSummary fromDelta = new JobSummary("features");
    FeaturesJob.Result d =
        FeaturesJob.run(
            spark,
            new JobInput(table.toString(), true, OptionalLong.empty()),
            tmp.resolve("features-delta").toString(),
            5,
            new ModelOptions(null, null, false),
            OutputOptions.NONE,
            fromDelta);
    FeaturesJob.Result p =
        FeaturesJob.run(
            spark,
            JobInput.parquet(copy.toString()),
            tmp.resolve("features-parquet").toString(),
            5,
            new ModelOptions(null, null, false),
            OutputOptions.NONE,
            new JobSummary("features"));
    long kept = lineitem.count() - lineitem.where(DELETED).count();
    assertEquals(kept, d.rows());
    assertEquals(kept, p.rows());
    assertTrue(fromDelta.render(kept, 1).contains("deletion vectors"), fromDelta.render(kept, 1));
    // The same model: the deleted rows counted in no statistic.
    FeatureEncoderModel a = d.model();
    FeatureEncoderModel b = p.model();
    assertEquals(kept, a.fittedRows());
    assertEquals(List.of(b.encodedColumns()), List.of(a.encodedColumns()));
    for (String c : a.encodedColumns()) {
      assertEquals(b.missing(c), a.missing(c), c);
      assertEquals(b.vocabulary(c), a.vocabulary(c), c);
      assertEquals(b.vocabularyCounts(c), a.vocabularyCounts(c), c);
      assertEquals(b.mean(c), a.mean(c), 1e-12 * Math.max(1, Math.abs(b.mean(c))), c);
      assertEquals(b.std(c), a.std(c), 1e-12 * Math.max(1, Math.abs(b.std(c))), c);
    }
    // The same features: each column's sum over the rows, up to the order of summation.
    Dataset<Row> fa = spark.read().parquet(tmp.resolve("features-delta").toString());
    Dataset<Row> fb = spark.read().parquet(tmp.resolve("features-parquet").toString());
    assertEquals(List.of(fb.columns()), List.of(fa.columns()));
    for (String c : fa.columns()) {
      double x = sum(fa, c);
      double y = sum(fb, c);
      assertEquals(y, x, 1e-9 * Math.max(1, Math.abs(y)), c);
    }
  }

  private static double sum(Dataset<Row> df, String column) {
    Row r = df.selectExpr("sum(cast(`" + column + "` as double))").first();
    return r.isNullAt(0) ? 0 : r.getDouble(0);
  }
}
