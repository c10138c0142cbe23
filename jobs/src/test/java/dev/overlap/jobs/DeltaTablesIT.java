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
 * {@code ./spark-submit.sh etl --format delta} as a user runs it, on a Delta table with deletion
 * vectors written here by delta-spark: the script ships Delta's jars and sets its extension, the
 * job reads the table's latest version and its output equals Spark SQL's over {@code
 * spark.read.format("delta")}. One run through the script: versions, overwritten files and the
 * features job over Delta tables are read by the same {@code JobInput} in process ({@code
 * DeltaInputTest}).
 */
public class DeltaTablesIT {
  @TempDir static Path tmp;
  static SparkSession spark;
  static Path vectors;

  @BeforeAll
  static void tables() {
    spark = DeltaTables.session(false);
    Dataset<Row> lineitem = DeltaTables.lineitem(spark, 0.001, 2);
    vectors = tmp.resolve("vectors");
    DeltaTables.withDeletionVectors(lineitem, vectors, "l_orderkey % 3 = 0");
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
}
