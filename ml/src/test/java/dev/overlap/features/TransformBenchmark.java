package dev.overlap.features;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.monotonically_increasing_id;

import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.api.Written;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;

/**
 * {@code transform} with every input column kept (each encoded column also passed through under
 * another name), as a narrow map, against the way it was done before: a local checkpoint of the
 * input with a row id, the features, and a join back by the id. Both written by Spark's writer, in
 * turns, in one process; then the encoder's GPU Parquet write of the features alone.
 *
 * <pre>
 *   TransformBenchmark INPUT OUTPUT_DIR ROUNDS [SKIP,...]
 * </pre>
 */
public final class TransformBenchmark {
  private TransformBenchmark() {}

  public static void main(String[] args) throws Exception {
    String out = args[1];
    int rounds = Integer.parseInt(args[2]);
    List<String> skip = args.length > 3 ? List.of(args[3].split(",")) : List.of();
    SparkSession spark = TestSessions.withPlugin("local[*]");
    Dataset<Row> in = spark.read().parquet(args[0]);
    List<Column> used = new ArrayList<>();
    List<Column> kept = new ArrayList<>();
    for (String c : in.columns()) {
      if (!skip.contains(c)) {
        used.add(col(c));
        kept.add(col(c).as(c + "_in"));
      }
    }
    Dataset<Row> fitOn = in.select(used.toArray(new Column[0]));
    long f0 = System.nanoTime();
    FeatureEncoderModel model = new FeatureEncoder().fit(fitOn);
    System.out.printf(Locale.ROOT, "fit %.2f s%n", (System.nanoTime() - f0) / 1e9);
    List<Column> all = new ArrayList<>(used);
    all.addAll(kept);
    Dataset<Row> input = in.select(all.toArray(new Column[0]));
    for (int round = 1; round <= rounds; round++) {
      Path narrow = Path.of(out, "narrow-" + round);
      Path joined = Path.of(out, "joined-" + round);
      try {
        long t0 = System.nanoTime();
        Dataset<Row> now = model.transform(input);
        now.write().mode(SaveMode.Overwrite).parquet(narrow.toString());
        long t1 = System.nanoTime();
        before(model, input).write().mode(SaveMode.Overwrite).parquet(joined.toString());
        long t2 = System.nanoTime();
        long a = spark.read().parquet(narrow.toString()).count();
        long b = spark.read().parquet(joined.toString()).count();
        System.out.printf(
            Locale.ROOT,
            "round %d: narrow map %.2f s (%d partitions of the input's %d, %d columns, %d rows);"
                + " checkpoint and join %.2f s (%d rows); ratio %.2fx%n",
            round,
            (t1 - t0) / 1e9,
            now.rdd().getNumPartitions(),
            input.rdd().getNumPartitions(),
            now.columns().length,
            a,
            (t2 - t1) / 1e9,
            b,
            (double) (t2 - t1) / (t1 - t0));
      } finally {
        EncoderBenchmark.delete(narrow);
        EncoderBenchmark.delete(joined);
      }
    }
    Path gpu = Path.of(out, "gpu-write");
    try {
      long t0 = System.nanoTime();
      PipelineReport report = PipelineReport.create(spark);
      Written w = model.writeParquet(fitOn, ParquetOutput.to(gpu.toString()), report);
      System.out.printf(
          Locale.ROOT,
          "GPU Parquet write of the features: %.2f s, %d rows, GPU tasks %d%n",
          (System.nanoTime() - t0) / 1e9,
          w.rows(),
          report.gpuTasks());
    } finally {
      EncoderBenchmark.delete(gpu);
    }
    spark.stop();
  }

  /** The transform as it was: checkpointed ids, the features, the other columns joined back. */
  private static Dataset<Row> before(FeatureEncoderModel model, Dataset<Row> input) {
    String id = "__bench_row_id";
    Dataset<Row> withId = input.withColumn(id, monotonically_increasing_id()).localCheckpoint(true);
    List<Column> encoded = new ArrayList<>();
    List<Column> rest = new ArrayList<>(List.of(col(id)));
    for (String c : withId.columns()) {
      if (c.endsWith("_in")) {
        rest.add(col(c));
      } else {
        encoded.add(col(c));
      }
    }
    Dataset<Row> features = model.transform(withId.select(encoded.toArray(new Column[0])));
    return features.join(withId.select(rest.toArray(new Column[0])), id).drop(id);
  }
}
