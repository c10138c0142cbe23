package dev.overlap.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.jobs.delta.DeltaTables;
import dev.overlap.jobs.etl.EtlInputs;
import java.nio.file.Path;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./spark-submit.sh etl|features --format delta} as a user runs them, on Delta tables
 * written here by delta-spark: the script ships Delta's jars and sets its extension, the job reads
 * the table's version and its output equals Spark SQL's over {@code spark.read.format("delta")}.
 */
public class DeltaTablesIT {
  @TempDir static Path tmp;
  static SparkSession spark;
  static Dataset<Row> lineitem;
  static Path vectors;
  static Path overwritten;

  @BeforeAll
  static void tables() {
    spark = DeltaTables.session(false);
    lineitem = DeltaTables.lineitem(spark, 0.001, 2).cache();
    vectors = tmp.resolve("vectors");
    DeltaTables.withDeletionVectors(lineitem, vectors, "l_orderkey % 3 = 0");
    overwritten = tmp.resolve("overwritten");
    DeltaTables.write(lineitem.select("l_quantity", "l_returnflag", "l_shipdate"), overwritten);
    lineitem
        .where("l_orderkey % 5 = 0")
        .select("l_quantity", "l_returnflag", "l_shipdate")
        .write()
        .format("delta")
        .mode("overwrite")
        .save(overwritten.toString());
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  @Test
  void etlReadsADeletionVectorTableAsSparkDoes() throws Exception {
    Shell.Result r =
        Shell.submit(
            tmp, "etl", "--input", vectors.toString(), "--format", "delta", "--output", "etl");
    assertEquals(0, r.exitCode(), r.output());
    assertTrue(
        r.output().matches("(?s).*\nDelta table +'" + vectors + "' version 2 \\(the latest\\).*"),
        r.output());
    assertTrue(r.output().contains("files have deletion vectors"), r.output());
    spark.read().format("delta").load(vectors.toString()).createOrReplaceTempView("vectors");
    EtlInputs.assertSame(
        spark.sql(String.format(Locale.ROOT, EtlInputs.Q1, "vectors")),
        spark
            .read()
            .parquet(tmp.resolve("etl/q1").toString())
            .orderBy("l_returnflag", "l_linestatus"),
        "Q1");
    EtlInputs.assertSame(
        spark.sql(String.format(Locale.ROOT, EtlInputs.Q6, "vectors")),
        spark.read().parquet(tmp.resolve("etl/q6").toString()),
        "Q6");
  }

  @Test
  void featuresReadsAnOlderVersionsFilesOnly() throws Exception {
    Shell.Result r =
        Shell.submit(
            tmp,
            "features",
            "--input",
            overwritten.toString(),
            "--format",
            "delta",
            "--version",
            "0",
            "--output",
            "features");
    assertEquals(0, r.exitCode(), r.output());
    assertTrue(r.output().contains("version 0 (--version), "), r.output());
    assertTrue(r.output().contains("read as plain Parquet files"), r.output());
    // Version 0's rows only, though the folder also holds version 1's files.
    assertEquals(
        lineitem.count(), spark.read().parquet(tmp.resolve("features").toString()).count());
  }
}
