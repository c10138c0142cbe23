package dev.overlap.executor.plan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.input.parquet.FilePlan;
import dev.overlap.executor.input.parquet.ParquetInput;
import dev.overlap.executor.input.parquet.delta.DeletedRows;
import dev.overlap.executor.input.parquet.delta.DeltaFormat;
import dev.overlap.executor.input.parquet.delta.KeptRows;
import dev.overlap.executor.testing.LocalSession;
import dev.overlap.executor.testing.PassThroughKernel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.paths.SparkPath;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.delta.DeltaParquetFileFormat;
import org.apache.spark.sql.delta.RowIndexFilterType;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A Delta table with deletion vectors, written by delta-spark with several row groups a file, as
 * the GPU's Parquet scan plans it: Delta's scan is found under its filter, each file's vector is
 * read back as exactly the rows the delete named (by their index in the file), the keep masks of
 * the row groups keep every other row, and the host's path over Spark's batches keeps the rows
 * Spark's Delta reader gives. A table whose files hold other column names is not taken.
 */
class DeletionVectorScansTest {
  private static final String DELETED = "id % 7 = 3 or (id >= 20000 and id < 26000)";
  private static SparkSession spark;
  private static String table;
  private static String mapped;

  @BeforeAll
  static void start() throws Exception {
    spark =
        LocalSession.start(
            "local[2]",
            "deletion-vectors",
            "spark.sql.extensions",
            "io.delta.sql.DeltaSparkSessionExtension",
            "spark.sql.catalog.spark_catalog",
            "org.apache.spark.sql.delta.catalog.DeltaCatalog",
            "spark.databricks.delta.snapshotPartitions",
            "1",
            // Files split across partitions: a split's rows start inside its file.
            "spark.sql.files.maxPartitionBytes",
            "131072",
            "spark.sql.files.openCostInBytes",
            "0");
    // Small row groups: a file's rows lie in several of them.
    spark.sparkContext().hadoopConfiguration().setInt("parquet.block.size", 64 * 1024);
    Path root = Files.createTempDirectory("overlap-dv");
    table = root.resolve("t").toString();
    Dataset<Row> rows =
        spark
            .range(0, 60_000)
            .selectExpr("id", "cast(id % 11 as int) as n", "concat('v', id) as s")
            .coalesce(2);
    rows.write().format("delta").save(table);
    spark.sql(
        "ALTER TABLE delta.`"
            + table
            + "` SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')");
    spark.sql("DELETE FROM delta.`" + table + "` WHERE " + DELETED);
    mapped = root.resolve("m").toString();
    rows.write().format("delta").save(mapped);
    spark.sql(
        "ALTER TABLE delta.`"
            + mapped
            + "` SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true',"
            + " 'delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '3',"
            + " 'delta.minWriterVersion' = '7')");
    spark.sql("ALTER TABLE delta.`" + mapped + "` RENAME COLUMN n TO m");
    spark.sql("DELETE FROM delta.`" + mapped + "` WHERE " + DELETED);
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  private static ColumnarPlans.Columnar found(Dataset<Row> df) {
    var qe = ((org.apache.spark.sql.classic.Dataset<Row>) df).queryExecution();
    if (!DeletionVectorScans.inLogicalPlan(qe.optimizedPlan())) {
      return null;
    }
    return DeletionVectorScans.beforePreparations(qe.sparkPlan());
  }

  @Test
  void deltasMarkingColumnIsTheOneNamedHere() {
    assertEquals(DeltaParquetFileFormat.IS_ROW_DELETED_COLUMN_NAME(), DeltaFormat.DELETED_COLUMN);
  }

  @Test
  void theScanUnderDeltasFilterIsFoundWithItsColumnsAndMark() {
    Dataset<Row> df = spark.read().format("delta").load(table).select("s", "id");
    ColumnarPlans.Columnar c = found(df);
    assertNotNull(c);
    assertNotNull(c.parquetScan(), c.plan().toString());
    assertArrayEquals(new String[] {"s", "id"}, c.names());
    assertTrue(c.deletedColumn() >= 0);
    assertEquals(DeltaFormat.DELETED_COLUMN, c.plan().output().apply(c.deletedColumn()).name());
    // Spark's own filter over the scan is not a plain columnar plan: the rows path, as before.
    assertNull(
        ColumnarPlans.columnar(
            ((org.apache.spark.sql.classic.Dataset<Row>) df).queryExecution().executedPlan()));
    // A computed column or a filter of the user's own: not taken.
    assertNull(found(spark.read().format("delta").load(table).selectExpr("id + 1 as x")));
    assertNull(found(spark.read().format("delta").load(table).where("id > 5")));
  }

  @Test
  void aTableWhoseFilesHoldOtherColumnNamesIsNotTaken() {
    Dataset<Row> df = spark.read().format("delta").load(mapped).select("id", "m");
    assertEquals(60_000 - spark.range(0, 60_000).where(DELETED).count(), df.count());
    assertNull(found(df));
  }

  @Test
  void eachFilesVectorListsTheDeletedRowsAndTheMasksKeepTheRest() throws Exception {
    Dataset<Row> df = spark.read().format("delta").load(table).select("id", "n");
    ColumnarPlans.Columnar c = found(df);
    FileSourceScanExec scan = c.parquetScan();
    ParquetInput in =
        ParquetInput.of(scan, c.names(), new StructType().add("id", "long").add("n", "int"), spark);
    assertNotNull(in);
    List<FilePlan> plans = new ArrayList<>();
    for (int p = 0; p < scan.inputRDD().getNumPartitions(); p++) {
      plans.addAll(in.plan(p));
    }
    // The truth: the deleted rows' indices in each file, from Spark's plain read of the files.
    Map<String, List<Long>> truth = new TreeMap<>();
    String[] files = plans.stream().map(p -> p.split().path()).distinct().toArray(String[]::new);
    for (Row r :
        spark
            .read()
            .parquet(files)
            .where(DELETED)
            .selectExpr("_metadata.file_path", "_metadata.row_index")
            .collectAsList()) {
      truth.computeIfAbsent(r.getString(0), k -> new ArrayList<>()).add(r.getLong(1));
    }
    assertEquals(files.length, truth.size());
    assertTrue(
        plans.stream().anyMatch(p -> p.split().start() > 0), "files split across partitions");
    // The ids the delete removed, by its own condition.
    java.util.Set<Long> deletedIds =
        new java.util.HashSet<>(spark.range(0, 60_000).where(DELETED).collectAsList());
    long kept = 0;
    Map<String, Integer> groupsSeen = new HashMap<>();
    for (FilePlan plan : plans) {
      DeletedRows d = plan.deleted();
      assertNotNull(d, plan.split().fileName() + " has a deletion vector");
      long[] want =
          truth.get(plan.split().path()).stream().mapToLong(Long::longValue).sorted().toArray();
      assertArrayEquals(want, d.positions(), plan.split().path());
      int[] groups = plan.rowGroups();
      long[] rows = new long[groups.length];
      for (int g = 0; g < groups.length; g++) {
        rows[g] = plan.rows(groups[g]);
      }
      boolean[] keep = d.keep(groups, rows);
      // The truth, independent of row indices: the rows of these groups as parquet-mr reads them,
      // each kept unless the delete's condition holds for its id.
      List<Boolean> expected = new ArrayList<>();
      for (long id : ids(plan.split().path(), groups)) {
        expected.add(!deletedIds.contains(id));
      }
      assertTrue(keep == null || keep.length == expected.size(), "a mask row for each row");
      List<Boolean> got = new ArrayList<>();
      for (int i = 0; i < expected.size(); i++) {
        got.add(keep == null || keep[i]);
      }
      assertEquals(expected, got, plan.split() + " groups " + java.util.Arrays.toString(groups));
      long dropped = got.stream().filter(k -> !k).count();
      assertEquals(dropped, d.count(groups));
      kept += got.size() - dropped;
      groupsSeen.merge(plan.split().path(), groups.length, Integer::sum);
    }
    for (FilePlan plan : plans) {
      assertEquals(
          plan.footer().metadata().getBlocks().size(),
          groupsSeen.get(plan.split().path()),
          "every row group of " + plan.split().fileName() + " once");
      assertTrue(groupsSeen.get(plan.split().path()) > 2, "several row groups a file");
    }
    assertEquals(df.count(), kept);
  }

  /** The ids in row groups {@code groups} of {@code file}, in that order, read by parquet-mr. */
  private static List<Long> ids(String file, int[] groups) throws java.io.IOException {
    List<Long> ids = new ArrayList<>();
    var in =
        org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(
            new org.apache.hadoop.fs.Path(file), spark.sparkContext().hadoopConfiguration());
    try (var reader = org.apache.parquet.hadoop.ParquetFileReader.open(in)) {
      var schema = reader.getFooter().getFileMetaData().getSchema();
      var io = new org.apache.parquet.io.ColumnIOFactory().getColumnIO(schema);
      for (int g : groups) {
        var pages = reader.readRowGroup(g);
        var records =
            io.getRecordReader(
                pages,
                new org.apache.parquet.example.data.simple.convert.GroupRecordConverter(schema));
        for (long r = 0; r < pages.getRowCount(); r++) {
          ids.add(records.read().getLong("id", 0));
        }
      }
    }
    return ids;
  }

  @Test
  void theHostsPathKeepsTheRowsSparksDeltaReaderGives() {
    Dataset<Row> df = spark.read().format("delta").load(table).select("n", "id");
    ColumnarPlans.Columnar c = found(df);
    int[] cols = c.columns();
    int marked = c.deletedColumn();
    List<Long> ids =
        c.plan()
            .executeColumnar()
            .toJavaRDD()
            .mapPartitions(
                it -> {
                  List<Long> out = new ArrayList<>();
                  KeptRows rows = new KeptRows(it, cols, marked);
                  while (rows.hasNext()) {
                    var r = rows.next();
                    assertEquals(2, r.numFields());
                    out.add(r.getLong(1) * 100 + r.getInt(0));
                  }
                  return out.iterator();
                })
            .collect();
    List<Long> want =
        df.collectAsList().stream().map(r -> r.getLong(1) * 100 + r.getInt(0)).sorted().toList();
    assertEquals(want, ids.stream().sorted().toList());
  }

  @Test
  void aKernelOverTheTablePlansDeltasScanAndReadsTheKeptRowsWithoutAGpu() {
    Dataset<Row> df = spark.read().format("delta").load(table).select("id", "n");
    PlannedInput planned = InputPlanner.forMap(JobSetup.of(df, new PassThroughKernel(), null));
    assertTrue(planned instanceof PlannedInput.Parquet, planned.getClass().getName());
    assertTrue(((PlannedInput.Parquet) planned).deletedColumn() >= 0);
    // Here no GPU: every task reads the host's path, the rows Delta's marking column keeps.
    List<Long> out =
        GpuPartitions.map(df, new PassThroughKernel()).collectAsList().stream()
            .map(r -> r.getLong(0) * 100 + r.getInt(1))
            .sorted()
            .toList();
    List<Long> want =
        df.collectAsList().stream().map(r -> r.getLong(0) * 100 + r.getInt(1)).sorted().toList();
    assertEquals(want, out);
    assertEquals(60_000 - spark.range(0, 60_000).where(DELETED).count(), out.size());
  }

  private static PartitionedFile file(Map<String, Object> meta) {
    scala.collection.immutable.Map<String, Object> m =
        scala.collection.immutable.Map$.MODULE$.empty();
    for (Map.Entry<String, Object> e : meta.entrySet()) {
      m = m.updated(e.getKey(), e.getValue());
    }
    return new PartitionedFile(
        InternalRow.empty(),
        SparkPath.fromUrlString("file:/t/part-0.parquet"),
        0,
        10,
        new String[0],
        0L,
        10L,
        m);
  }

  @Test
  void aVectorThatKeepsTheRowsItListsIsLeftToDeltasReader() {
    String id = DeltaParquetFileFormat.FILE_ROW_INDEX_FILTER_ID_ENCODED();
    String type = DeltaParquetFileFormat.FILE_ROW_INDEX_FILTER_TYPE();
    assertTrue(DeltaFormat.dropsListedRows(file(Map.of())));
    assertNull(DeltaFormat.deletionVector(file(Map.of()), "/t"));
    PartitionedFile drops = file(Map.of(id, "abc", type, RowIndexFilterType.IF_CONTAINED));
    assertTrue(DeltaFormat.dropsListedRows(drops));
    assertEquals("abc", DeltaFormat.deletionVector(drops, "/t").descriptor());
    // A change feed's read keeps the rows a vector lists: not the GPU's scan.
    PartitionedFile keeps = file(Map.of(id, "abc", type, RowIndexFilterType.IF_NOT_CONTAINED));
    assertFalse(DeltaFormat.dropsListedRows(keeps));
    assertFalse(DeltaFormat.dropsListedRows(file(Map.of(id, "abc"))));
  }

  @Test
  void aPartitionedTableWithDeletionVectorsIsNotTaken() throws Exception {
    String partitioned = Files.createTempDirectory("overlap-dv-parts").resolve("p").toString();
    spark
        .range(0, 3000)
        .selectExpr("id", "cast(id % 3 as int) as k")
        .write()
        .format("delta")
        .partitionBy("k")
        .save(partitioned);
    spark.sql(
        "ALTER TABLE delta.`"
            + partitioned
            + "` SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')");
    spark.sql("DELETE FROM delta.`" + partitioned + "` WHERE id % 5 = 0");
    Dataset<Row> df = spark.read().format("delta").load(partitioned).select("id");
    assertEquals(2400, df.count());
    assertNull(found(df), "its partition values come from the log");
  }
}
