package dev.overlap.executor.task;

import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.bench.BenchFiles;
import dev.overlap.executor.input.rows.BatchLayout;
import dev.overlap.executor.input.rows.ColumnarSource;
import dev.overlap.executor.input.rows.HostBatch;
import dev.overlap.executor.input.rows.HostBatchWriter;
import dev.overlap.executor.input.rows.RowSource;
import dev.overlap.executor.pipeline.BatchSource;
import dev.overlap.executor.plan.ColumnarPlans;
import dev.overlap.executor.testing.LocalSession;
import dev.overlap.executor.types.ColumnType;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The host side of the pipeline, without a GPU: Spark's vectorized Parquet reader alone against the
 * same reader plus packing into staging buffers ({@link HostBatchWriter}, pageable memory here), on
 * the same files in one run. Tells how much of the "host packing" stage is decoding and how much is
 * packing. Medians of {@code runs} timed runs after one warm-up.
 *
 * <p>Usage: {@code PackingBenchmark <parquet path> [columns=all, comma-separated] [slots=4]
 * [runs=5] [bufferMiB=64] [input=columnar|rows]}; {@code rows} reads Spark's rows (the path taken
 * when the plan above the scan is not a plain columnar scan) and packs them row by row. When the
 * path does not exist, it is first written with 50 M rows of {@code SparkPipelineBenchmark}'s two
 * columns (a bigint and a double, uncompressed), and kept: the last line names it with its size.
 */
public final class PackingBenchmark {
  public static void main(String[] args) throws Exception {
    String path = args[0];
    String columns = args.length > 1 ? args[1] : "all";
    int slots = args.length > 2 ? Integer.parseInt(args[2]) : 4;
    int runs = args.length > 3 ? Integer.parseInt(args[3]) : 5;
    long bufferBytes = (args.length > 4 ? Long.parseLong(args[4]) : 64) << 20;
    boolean byRows = args.length > 5 && args[5].equals("rows");
    SparkSession spark = LocalSession.start("local[" + slots + "]", "overlap-packing-bench");
    boolean generated = !java.nio.file.Files.exists(java.nio.file.Path.of(path));
    if (generated) {
      spark
          .range(0, 50_000_000L, 1, 4 * slots)
          .selectExpr("id * 2654435761 % 1000003 as x", "cast(id as double) * 0.5 as y")
          .write()
          .option("compression", "uncompressed")
          .parquet(path);
    }
    Dataset<Row> df = spark.read().parquet(path);
    if (!columns.equals("all")) {
      df = df.selectExpr(columns.split(","));
    }
    StructType schema = df.schema();
    SparkPlan plan = df.queryExecution().executedPlan();
    ColumnarPlans.Columnar columnar = ColumnarPlans.columnar(plan);
    // The scan's own batches are read below: it must give the selected columns, in order.
    int[] inOrder = java.util.stream.IntStream.range(0, schema.length()).toArray();
    if (columnar == null || !java.util.Arrays.equals(columnar.columns(), inOrder)) {
      throw new IllegalArgumentException("not a columnar scan of the selected columns:\n" + plan);
    }
    SparkPlan scan = columnar.plan();
    ColumnType[] types = ColumnType.forSchema(schema, "packing benchmark input");
    System.out.printf(
        Locale.ROOT, "input: %s, %d columns %s, %d slots%n", path, types.length, schema, slots);
    double[] decode = new double[runs];
    double[] pack = new double[runs];
    long rows = 0;
    long packed = 0;
    for (int r = 0; r <= runs; r++) {
      long s = System.nanoTime();
      if (byRows) {
        // Touch every value, as packing does, so the read is not left lazy.
        rows =
            df.queryExecution()
                .toRdd()
                .toJavaRDD()
                .map(row -> row.copy() != null ? 1L : 0L)
                .fold(0L, Long::sum);
      } else {
        JavaRDD<ColumnarBatch> batches = scan.executeColumnar().toJavaRDD();
        rows = batches.map(ColumnarBatch::numRows).fold(0, Integer::sum);
      }
      double d = (System.nanoTime() - s) / 1e9;
      s = System.nanoTime();
      if (byRows) {
        packed =
            df.queryExecution()
                .toRdd()
                .toJavaRDD()
                .mapPartitions(it -> pack(w -> new RowSource(it, w), schema, types, bufferBytes))
                .fold(0L, Long::sum);
      } else {
        JavaRDD<ColumnarBatch> again = scan.executeColumnar().toJavaRDD();
        packed =
            again
                .mapPartitions(
                    it -> pack(w -> new ColumnarSource(it, w), schema, types, bufferBytes))
                .fold(0L, Long::sum);
      }
      double p = (System.nanoTime() - s) / 1e9;
      if (packed != rows) {
        throw new IllegalStateException("packed " + packed + " rows of " + rows);
      }
      System.out.printf(
          Locale.ROOT,
          "%s: %d rows; read %.3f s, read and pack %.3f s%n",
          r == 0 ? "warm-up" : "run " + r,
          rows,
          d,
          p);
      if (r > 0) {
        decode[r - 1] = d;
        pack[r - 1] = p;
      }
    }
    Arrays.sort(decode);
    Arrays.sort(pack);
    double md = decode[runs / 2];
    double mp = pack[runs / 2];
    System.out.printf(
        Locale.ROOT,
        "median of %d runs: read %.3f s, read and pack %.3f s; packing adds %.0f %%%n",
        runs,
        md,
        mp,
        100 * (mp - md) / md);
    spark.stop();
    if (generated) {
      BenchFiles.kept(java.nio.file.Path.of(path), "the input this run generated");
    }
  }

  /**
   * One staging buffer per task thread, made and touched once and reused by every partition the
   * thread runs, as the executor's pooled buffers are.
   */
  private static final ThreadLocal<HostMemoryBuffer> STAGING = new ThreadLocal<>();

  private static HostMemoryBuffer staging(long bytes) {
    HostMemoryBuffer b = STAGING.get();
    if (b == null) {
      b = HostMemoryBuffer.allocate(bytes, false);
      b.setMemory(0, bytes, (byte) 0);
      STAGING.set(b);
    }
    return b;
  }

  /**
   * Packs a partition into its thread's staging buffer with the task's own loop ({@link
   * BatchSource#fill}, as the GPU path runs it); returns the rows.
   */
  private static Iterator<Long> pack(
      Function<HostBatchWriter, BatchSource<HostMemoryBuffer, HostBatch>> input,
      StructType schema,
      ColumnType[] types,
      long bufferBytes) {
    BatchLayout layout = new BatchLayout(types, bufferBytes, Integer.MAX_VALUE - 1, 32);
    BatchSource<HostMemoryBuffer, HostBatch> source =
        input.apply(new HostBatchWriter(schema, layout));
    HostMemoryBuffer buf = staging(bufferBytes);
    long rows = 0;
    do {
      try (HostBatch h = source.fill(buf, () -> {})) {
        rows += h.rows();
      }
    } while (source.more());
    return List.of(rows).iterator();
  }
}
