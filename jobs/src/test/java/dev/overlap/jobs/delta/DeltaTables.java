package dev.overlap.jobs.delta;

import dev.overlap.jobs.TestSessions;
import dev.overlap.jobs.tpch.TpchTables;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Real Delta tables for the tests, written by delta-spark: TPC-H lineitem as a plain table, after a
 * delete with deletion vectors, with a column renamed under column mapping, after a schema
 * evolution, after an update, and overwritten by a second version. Shared by the CPU test ({@link
 * DeltaInputTest}) and the GPU one ({@link DeltaInputGpuTest}).
 */
public final class DeltaTables {
  private DeltaTables() {}

  /** A session that reads and writes Delta tables, with {@code keyValues} set. */
  public static SparkSession session(boolean plugin, String... keyValues) {
    List<String> kv = new ArrayList<>(List.of(keyValues));
    kv.addAll(
        List.of(
            "spark.sql.extensions",
            DeltaSetup.EXTENSION,
            "spark.sql.catalog.spark_catalog",
            DeltaSetup.CATALOG,
            "spark.sql.shuffle.partitions",
            "4",
            // Tiny tables: Delta's log state in one partition, not 50.
            "spark.databricks.delta.snapshotPartitions",
            "1"));
    String[] settings = kv.toArray(new String[0]);
    return plugin
        ? TestSessions.withPlugin("local[2]", settings)
        : TestSessions.local("local[2]", settings);
  }

  /** TPC-H lineitem at scale factor {@code sf}, in {@code parts} partitions. */
  public static Dataset<Row> lineitem(SparkSession spark, double sf, int parts) {
    List<Row> rows = new ArrayList<>();
    for (Iterator<Row> it = TpchTables.lineItems(sf, 1, 1, null); it.hasNext(); ) {
      rows.add(it.next());
    }
    return spark.createDataFrame(rows, TpchTables.LINEITEM).repartition(parts);
  }

  /** {@code rows} written as a new Delta table at {@code table}; its version 0. */
  public static void write(Dataset<Row> rows, Path table) {
    rows.write().format("delta").save(table.toString());
  }

  /** Runs {@code sql} with {@code {t}} standing for the Delta table at {@code table}. */
  public static void sql(SparkSession spark, Path table, String sql) {
    spark.sql(sql.replace("{t}", "delta.`" + table + "`"));
  }

  /**
   * A table with deletion vectors enabled (version 1) whose rows {@code deleted} names are deleted
   * (version 2): Delta marks them in deletion vectors and keeps the files.
   */
  public static void withDeletionVectors(Dataset<Row> rows, Path table, String deleted) {
    SparkSession spark = rows.sparkSession();
    write(rows, table);
    sql(spark, table, "ALTER TABLE {t} SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')");
    sql(spark, table, "DELETE FROM {t} WHERE " + deleted);
  }

  /**
   * A table under column mapping whose column {@code l_tax} was written as {@code tax} and renamed:
   * its files hold {@code tax}, the table {@code l_tax}.
   */
  public static void withRenamedColumn(Dataset<Row> rows, Path table) {
    SparkSession spark = rows.sparkSession();
    write(rows.withColumnRenamed("l_tax", "tax"), table);
    sql(
        spark,
        table,
        "ALTER TABLE {t} SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name',"
            + " 'delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5')");
    sql(spark, table, "ALTER TABLE {t} RENAME COLUMN tax TO l_tax");
  }

  /** The table's Parquet files, whatever its log says of them. */
  public static List<Path> parquetFiles(Path table) throws Exception {
    try (Stream<Path> s = Files.walk(table)) {
      return s.filter(p -> p.getFileName().toString().endsWith(".parquet"))
          .filter(p -> !p.toString().contains("_delta_log"))
          .sorted()
          .toList();
    }
  }
}
