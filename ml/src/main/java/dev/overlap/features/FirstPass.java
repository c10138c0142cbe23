package dev.overlap.features;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.PipelineReport;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;

/**
 * The features job's first pass as GPU kernels over the input's batches ({@link FirstPassKernel}),
 * their partial aggregates merged here, on the driver. The statistics are those of {@link
 * SparkFirstPass#plan}, Spark's own aggregation, computed another way:
 *
 * <ul>
 *   <li>mean and sample standard deviation: per-batch counts, means and sums of squared deviations,
 *       combined by Chan's formulas; equal to Spark's within floating-point rounding (the order of
 *       the additions differs, as it does between two Spark runs of different partitioning). A
 *       column whose present values are all equal has a deviation of exactly 0, as in Spark. A
 *       column whose magnitudes a double's squares cannot hold (beyond about 1e144 or below about
 *       1e-120) gets its mean and deviation again from Spark's aggregation over scaled values
 *       ({@link FeatureScale});
 *   <li>mean day or instant: exact sums of integers, so exactly Spark's for dates; for timestamps
 *       the exact mean, where Spark's double sum may be a few microseconds off;
 *   <li>vocabularies exactly Spark's, by a bound: each batch reports its {@code top} most frequent
 *       values and the count below which the others lie; a second kernel ({@link VocabCountKernel})
 *       counts every reported value exactly; when the N-th most frequent of those occurs more often
 *       than any value left unreported can (the sum of the batches' bounds), the vocabulary is
 *       proven. Otherwise that column's vocabulary comes from Spark's own aggregation, as before,
 *       and the summary says so.
 * </ul>
 */
final class FirstPass {
  /** From this many columns on, the first pass runs as kernels even without a GPU. */
  static final int WIDE = 64;

  /** The fewest values a batch reports per string column. */
  static final int TOP_MIN = 1000;

  /** Most frequent first; ties by value in UTF-8 byte order, as Spark orders strings. */
  static final Comparator<Map.Entry<String, Long>> BY_COUNT =
      Comparator.<Map.Entry<String, Long>>comparingLong(Map.Entry::getValue)
          .reversed()
          .thenComparing(e -> e.getKey().getBytes(StandardCharsets.UTF_8), FirstPass::unsigned);

  private FirstPass() {}

  /**
   * The first pass through the GPU pipeline: {@code report} gets the partial aggregates' figures,
   * {@code counts} the exact counting's; {@code onSpark} receives the string columns whose
   * vocabulary the bound did not prove, which then came from Spark's aggregation.
   */
  static FeaturePlan kernels(
      Dataset<Row> input,
      int vocabularySize,
      PipelineReport report,
      PipelineReport counts,
      List<String> onSpark) {
    int top = Math.max(TOP_MIN, 4 * Math.max(1, vocabularySize));
    return kernels(input, vocabularySize, top, report, counts, onSpark);
  }

  /** The same, each batch reporting {@code top} values per string column. */
  static FeaturePlan kernels(
      Dataset<Row> input,
      int vocabularySize,
      int top,
      PipelineReport report,
      PipelineReport countsReport,
      List<String> onSpark) {
    InputColumns.check(input);
    FeaturePlan plan = new FeaturePlan(input.schema(), vocabularySize);
    if (plan.columns.isEmpty()) {
      return plan;
    }
    int width = plan.columns.size();
    int want = Math.max(1, vocabularySize);
    Dataset<Row> in = input.select(InputColumns.cols(plan.inputColumns()));
    List<Row> partials =
        GpuPartitions.map(in, new FirstPassKernel(plan, top), report).collectAsList();
    Moments[] moments = new Moments[width];
    BigInteger[] sums = new BigInteger[width];
    long[] present = new long[width];
    long[] bounds = new long[width];
    List<Map<String, Long>> counts = new ArrayList<>();
    for (int i = 0; i < width; i++) {
      moments[i] = new Moments();
      sums[i] = BigInteger.ZERO;
      counts.add(new HashMap<>());
    }
    long[] nulls = new long[width];
    for (Row r : partials) {
      int i = r.getInt(0);
      long n = r.getLong(2);
      if (i < 0) {
        plan.rows += n;
        continue;
      }
      nulls[i] += r.isNullAt(10) ? 0 : r.getLong(10);
      switch (plan.columns.get(i).kind) {
        case NUMERIC:
          moments[i].nonFinite += r.isNullAt(7) ? 0 : r.getLong(7);
          if (n > 0) {
            moments[i].merge(n, r.getDouble(3), r.getDouble(4), r.getDouble(5), r.getDouble(6));
          }
          break;
        case DATE:
        case TIMESTAMP:
        case TIMESTAMP_NTZ:
          present[i] += n;
          sums[i] =
              sums[i]
                  .add(BigInteger.valueOf(r.getLong(8)).shiftLeft(32))
                  .add(BigInteger.valueOf(r.getLong(9)));
          break;
        case STRING:
          if (r.isNullAt(1)) {
            bounds[i] += n;
          } else {
            counts.get(i).merge(r.getString(1), n, Long::sum);
          }
          break;
        default:
          throw new AssertionError(plan.columns.get(i).kind);
      }
    }
    exactCounts(in, plan, bounds, counts, countsReport);
    for (int i = 0; i < width; i++) {
      FeaturePlan.Column c = plan.columns.get(i);
      c.missing = nulls[i];
      switch (c.kind) {
        case NUMERIC:
          Moments m = moments[i];
          c.nonFinite = m.nonFinite;
          c.missing += m.nonFinite;
          c.mean = m.n > 0 ? m.mean : 0.0;
          c.scaledStd = m.n > 1 && m.max > m.min ? Math.sqrt(m.m2 / (m.n - 1)) : 0.0;
          c.nonNegative = m.n > 0 && m.min >= 0;
          c.scale = m.n > 0 ? FeatureScale.of(m.min, m.max) : 1.0;
          break;
        case DATE:
        case TIMESTAMP:
        case TIMESTAMP_NTZ:
          // Math.round of the mean: floor(sum / n + 1/2).
          c.meanEpoch =
              present[i] == 0
                  ? 0
                  : floorDiv(
                          sums[i].shiftLeft(1).add(BigInteger.valueOf(present[i])),
                          BigInteger.valueOf(2 * present[i]))
                      .longValueExact();
          break;
        case STRING:
          List<String> top1 = proven(counts.get(i), bounds[i], want);
          java.util.LinkedHashMap<String, Long> ranked = new java.util.LinkedHashMap<>();
          if (top1 == null) {
            onSpark.add(c.name);
            ranked = SparkFirstPass.sparkTop(input, c.name, want);
          } else {
            // Proven, so their counts are exact: every batch's, or the second pass's.
            for (String v : top1) {
              ranked.put(v, counts.get(i).get(v));
            }
          }
          c.setVocabulary(ranked, vocabularySize);
          break;
        default:
          throw new AssertionError(c.kind);
      }
    }
    FeatureScale.rescaleMoments(input, plan);
    plan.columns.forEach(c -> c.fill = c.mean); // imputeStrategy mean; ImputedValues sets others
    SparkFirstPass.warnNonFinite(plan);
    return plan;
  }

  /**
   * Whether the first pass runs as kernels through the pipeline ({@link FirstPass}) for an input of
   * {@code columns} encoded columns: on a GPU; on a cluster, whose driver has no executor and whose
   * executors run the kernels on their GPUs or, without one, their CPU implementations; and for an
   * input of {@link #WIDE} columns or more, whatever the executors, where the kernels' CPU
   * implementations (one pass, every column) beat one Spark aggregation over them all (2000 columns
   * of 1000 rows: 3.2 s against 163 s on 2 cores). Otherwise, in local mode without a GPU or with
   * {@code spark.overlap.enabled=false}, Spark's own aggregation, the faster CPU path for a few
   * columns over many rows.
   */
  static boolean kernelFirstPass(SparkSession spark, int columns) {
    boolean enabled = Boolean.parseBoolean(spark.conf().get("spark.overlap.enabled", "true"));
    GpuStatus.State state = GpuStatus.current().state();
    return columns >= WIDE
        || enabled
            && (state == GpuStatus.State.GPU
                || state == GpuStatus.State.NOT_STARTED && !spark.sparkContext().isLocal());
  }

  /**
   * Replaces the partial counts of the string columns whose batches left values out (bound above 0)
   * by the exact counts of the reported values, from a second pass of {@link VocabCountKernel}.
   */
  private static void exactCounts(
      Dataset<Row> in,
      FeaturePlan plan,
      long[] bounds,
      List<Map<String, Long>> counts,
      PipelineReport report) {
    List<VocabCountKernel.Candidates> wanted = new ArrayList<>();
    for (int i = 0; i < bounds.length; i++) {
      if (bounds[i] > 0) {
        wanted.add(new VocabCountKernel.Candidates(i, new ArrayList<>(counts.get(i).keySet())));
      }
    }
    if (wanted.isEmpty()) {
      return;
    }
    String[] names =
        wanted.stream().map(c -> plan.columns.get(c.col()).name).toArray(String[]::new);
    wanted.forEach(c -> counts.get(c.col()).clear());
    // Spark sums the batches' counts: the driver receives one row per value found.
    for (Row r :
        GpuPartitions.map(in.select(InputColumns.cols(names)), new VocabCountKernel(wanted), report)
            .groupBy("col", "value")
            .agg(functions.sum("n"))
            .collectAsList()) {
      counts.get(r.getInt(0)).put(r.getString(1), r.getLong(2));
    }
  }

  /**
   * The {@code want} most frequent values, when the counts prove them: every value counted exactly,
   * and any value not counted (at most {@code bound} occurrences) ranks below the {@code want}-th.
   * Null when not proven.
   */
  static List<String> proven(Map<String, Long> counts, long bound, int want) {
    List<Map.Entry<String, Long>> sorted = new ArrayList<>(counts.entrySet());
    sorted.sort(BY_COUNT);
    if (bound > 0 && (sorted.size() < want || sorted.get(want - 1).getValue() <= bound)) {
      return null;
    }
    return sorted.subList(0, Math.min(want, sorted.size())).stream()
        .map(Map.Entry::getKey)
        .toList();
  }

  private static BigInteger floorDiv(BigInteger a, BigInteger b) {
    BigInteger[] qr = a.divideAndRemainder(b);
    return qr[1].signum() < 0 ? qr[0].subtract(BigInteger.ONE) : qr[0];
  }

  private static int unsigned(byte[] a, byte[] b) {
    return java.util.Arrays.compareUnsigned(a, b);
  }
}
