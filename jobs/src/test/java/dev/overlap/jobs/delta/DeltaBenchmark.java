package dev.overlap.jobs.delta;

import dev.overlap.executor.api.PipelineReport;
import dev.overlap.jobs.TestSessions;
import dev.overlap.jobs.etl.TestEtl;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * What a Delta table with deletion vectors costs etl's Q1 on the path it takes (the GPU's Parquet
 * scan, the rows the vectors list dropped on the device; before that, Spark's Delta reader and its
 * rows packed on the host) against a plain Delta table of the same rows (its files decoded by the
 * GPU's Parquet scan). Both tables are written here from {@code generate}'s lineitem, the same way:
 * the plain one without the rows {@code DELETE} names, the other whole, then those rows deleted
 * with deletion vectors on. Q1 runs on each in turns, in one process, each run from reading the
 * table's log to the result rows; prints each run, the medians and their ratio. The rule:
 * deletion vectors on the GPU scan are worth building if the ratio is above 2.
 *
 * <pre>
 *   DeltaBenchmark LINEITEM WORK_DIR RUNS [DELETE]    DELETE: default "l_orderkey % 1000 = 1"
 * </pre>
 */
public final class DeltaBenchmark {
  private DeltaBenchmark() {}

  public static void main(String[] args) throws Exception {
    String lineitem = args[0];
    Path work = Path.of(args[1]);
    int runs = Integer.parseInt(args[2]);
    String deleted = args.length > 3 ? args[3] : "l_orderkey % 1000 = 1";
    SparkSession spark =
        TestSessions.withPlugin(
            "local[*]",
            "spark.sql.extensions",
            DeltaSetup.EXTENSION,
            "spark.sql.catalog.spark_catalog",
            DeltaSetup.CATALOG);
    Path plain = work.resolve("plain");
    Path vectors = work.resolve("vectors");
    try {
      long t0 = System.nanoTime();
      Dataset<Row> in = spark.read().parquet(lineitem);
      DeltaTables.write(in.where("not (" + deleted + ")"), plain);
      DeltaTables.withDeletionVectors(in, vectors, deleted);
      System.out.printf(Locale.ROOT, "tables written in %.1f s%n", (System.nanoTime() - t0) / 1e9);
      String[] names = {"plain", "deletion vectors"};
      Path[] tables = {plain, vectors};
      List<List<Double>> secs = List.of(new ArrayList<>(), new ArrayList<>());
      List<Row> first = null;
      for (int run = 1; run <= runs; run++) {
        for (int k = 0; k < 2; k++) {
          long t = System.nanoTime();
          DeltaInput table = DeltaInput.read(spark, tables[k].toString(), OptionalLong.empty());
          double read = (System.nanoTime() - t) / 1e9;
          PipelineReport report = PipelineReport.create(spark);
          List<Row> rows = TestEtl.q1(table.rows(), report).collectAsList();
          double s = (System.nanoTime() - t) / 1e9;
          secs.get(k).add(s);
          if (first == null) {
            first = rows;
          } else if (!sameCounts(first, rows)) {
            throw new IllegalStateException("the tables' Q1 differ:\n" + first + "\n" + rows);
          }
          System.out.printf(
              Locale.ROOT,
              "run %d, %s: %.2f s (its log read and planned in %.2f s); GPU tasks %d (Parquet %d, rows %d, columnar %d), CPU tasks %d;"
                  + " %s%n",
              run,
              names[k],
              s,
              read,
              report.gpuTasks(),
              report.gpuTasks(dev.overlap.executor.api.InputPath.PARQUET),
              report.gpuTasks(dev.overlap.executor.api.InputPath.ROWS),
              report.gpuTasks(dev.overlap.executor.api.InputPath.COLUMNAR),
              report.cpuTasks(),
              table.line());
        }
      }
      double a = median(secs.get(0));
      double b = median(secs.get(1));
      System.out.printf(
          Locale.ROOT,
          "Q1 median of %d runs: plain %.2f s, deletion vectors %.2f s; ratio %.2fx (%s)%n",
          runs,
          a,
          b,
          b / a,
          b / a > 2 ? "above 2: worth deletion vectors on the GPU scan" : "at most 2");
    } finally {
      spark.stop();
      delete(plain);
      delete(vectors);
    }
  }

  /** Whether two Q1 results have the same groups and counts (the same rows were read). */
  private static boolean sameCounts(List<Row> a, List<Row> b) {
    return counts(a).equals(counts(b));
  }

  private static java.util.Set<String> counts(List<Row> q1) {
    java.util.Set<String> out = new java.util.TreeSet<>();
    for (Row r : q1) {
      out.add(r.get(0) + "|" + r.get(1) + "|" + r.getLong(r.length() - 1)); // count_order
    }
    return out;
  }

  private static double median(List<Double> secs) {
    List<Double> s = new ArrayList<>(secs);
    Collections.sort(s);
    return s.get(s.size() / 2);
  }

  /** Deletes {@code dir} and everything under it, if it exists; says what it freed. */
  private static void delete(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    long bytes = 0;
    List<Path> all;
    try (Stream<Path> s = Files.walk(dir)) {
      all = s.sorted(Comparator.reverseOrder()).toList();
    }
    for (Path p : all) {
      bytes += Files.isRegularFile(p) ? Files.size(p) : 0;
      Files.delete(p);
    }
    System.out.printf(Locale.ROOT, "deleted %s (%.1f MB)%n", dir, bytes / 1e6);
  }
}
