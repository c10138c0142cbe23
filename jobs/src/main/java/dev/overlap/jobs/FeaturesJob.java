package dev.overlap.jobs;

import static org.apache.spark.sql.functions.col;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.api.Written;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feature engineering over any Parquet input, driven by the column types it finds (see {@link
 * FeatureKernel}). A first pass computes means, standard deviations, minimums and vocabularies; the
 * second pass derives the features on the GPU. Columns of other types are named in a warning and
 * passed through unchanged.
 *
 * <p><b>Non-finite values.</b> NaN, +Infinity and -Infinity in a float or double column are treated
 * as missing, exactly as null: the first pass leaves them out of the mean, deviation and minimum,
 * and the second flags them in {@code _isnull} and imputes them (see {@link FeatureKernel}). {@link
 * #run} reports how many there were, and in which columns, in the summary's {@code non-finite}
 * line.
 *
 * <p><b>Names.</b> Features whose names would equal an input column's, ignoring case, are renamed
 * with a suffix (see {@link FeaturePlan}); the row id that carries passed-through columns around
 * the kernel takes a name no input or output column has. Under Spark's default case-insensitive
 * resolution, input columns whose names differ only in case are refused before any work.
 */
public final class FeaturesJob {
  private static final Logger LOG = LoggerFactory.getLogger("dev.overlap");

  /** The row id's name, unless an input or output column has it (see {@link #features}). */
  static final String ROW_ID = "__overlap_row_id";

  private FeaturesJob() {}

  /** The first pass: statistics and vocabularies. */
  static FeaturePlan plan(Dataset<Row> input, int vocabularySize) {
    checkNames(input);
    FeaturePlan plan = new FeaturePlan(input.schema(), vocabularySize);
    List<Column> aggs = new ArrayList<>();
    for (FeaturePlan.Column c : plan.columns) {
      String q = quote(c.name);
      switch (c.kind) {
        case NUMERIC:
          if (c.floating) {
            aggs.add(functions.count(functions.when(nonFinite(c), functions.lit(1))));
          }
          Column x = finiteValue(c);
          aggs.add(functions.avg(x));
          aggs.add(functions.stddev_samp(x));
          aggs.add(functions.min(x));
          aggs.add(functions.max(x));
          break;
        case DATE:
        case TIMESTAMP:
        case TIMESTAMP_NTZ:
          aggs.add(functions.avg(functions.expr(FeaturePlan.epochSql(c.kind, q))));
          break;
        default:
          break;
      }
    }
    if (!aggs.isEmpty()) {
      Row stats =
          input.agg(aggs.get(0), aggs.subList(1, aggs.size()).toArray(new Column[0])).first();
      int at = 0;
      for (FeaturePlan.Column c : plan.columns) {
        switch (c.kind) {
          case NUMERIC:
            if (c.floating) {
              c.nonFinite = stats.getLong(at);
              at++;
            }
            c.mean = stats.isNullAt(at) ? 0.0 : stats.getDouble(at);
            c.scaledStd = stats.isNullAt(at + 1) ? 0.0 : stats.getDouble(at + 1);
            c.nonNegative = !stats.isNullAt(at + 2) && stats.getDouble(at + 2) >= 0;
            if (!stats.isNullAt(at + 2)) {
              c.scale = FeatureScale.of(stats.getDouble(at + 2), stats.getDouble(at + 3));
            }
            at += 4;
            break;
          case DATE:
          case TIMESTAMP:
          case TIMESTAMP_NTZ:
            c.meanEpoch = stats.isNullAt(at) ? 0 : Math.round(stats.getDouble(at));
            at++;
            break;
          default:
            break;
        }
      }
    }
    FeatureScale.rescaleMoments(input, plan);
    warnNonFinite(plan);
    for (FeaturePlan.Column c : plan.columns) {
      if (c.kind == FeaturePlan.Kind.STRING) {
        // The most frequent values; the first is the imputed value even with no vocabulary.
        List<String> top = sparkTop(input, c.name, Math.max(1, vocabularySize));
        c.mode = top.isEmpty() ? "" : top.get(0);
        c.vocabulary = List.copyOf(top.subList(0, Math.min(vocabularySize, top.size())));
      }
    }
    return plan;
  }

  /**
   * Numeric column {@code c} as double, null where it is missing: NaN and infinities of a float or
   * double column count as missing, as nulls do.
   */
  static Column finiteValue(FeaturePlan.Column c) {
    Column x = col(quote(c.name)).cast("double");
    return c.floating ? functions.when(functions.not(nonFinite(c)), x) : x;
  }

  /** Whether float or double column {@code c} is NaN or infinite; null for a null value. */
  private static Column nonFinite(FeaturePlan.Column c) {
    Column x = col(quote(c.name)).cast("double");
    return functions.isnan(x).or(functions.abs(x).equalTo(functions.lit(Double.POSITIVE_INFINITY)));
  }

  /** Logs the NaN and infinite values the first pass found, if any. */
  static void warnNonFinite(FeaturePlan plan) {
    if (plan.nonFiniteCount() > 0) {
      LOG.warn(
          "features: {} NaN or infinite values in {} are treated as missing",
          plan.nonFiniteCount(),
          plan.nonFiniteColumns());
    }
  }

  /**
   * The {@code n} most frequent present values of string column {@code name}, most frequent first,
   * ties by value: Spark's own aggregation. The aliases keep an input column named "count" from
   * clashing with the count.
   */
  static List<String> sparkTop(Dataset<Row> input, String name, int n) {
    List<String> top = new ArrayList<>();
    for (Row r :
        input
            .where(col(quote(name)).isNotNull())
            .groupBy(col(quote(name)).as("value"))
            .agg(functions.count(functions.lit(1)).as("n"))
            .orderBy(col("n").desc(), col("value").asc())
            .limit(n)
            .collectAsList()) {
      top.add(r.getString(0));
    }
    return top;
  }

  /** Both passes; the result has the feature columns, then any passed-through columns. */
  public static Dataset<Row> features(
      Dataset<Row> input, int vocabularySize, PipelineReport report) {
    return features(input, plan(input, vocabularySize), report);
  }

  /** The second pass, with the first pass's plan. */
  static Dataset<Row> features(Dataset<Row> input, FeaturePlan plan, PipelineReport report) {
    if (!plan.unsupported.isEmpty()) {
      LOG.warn(
          "features: columns of types it cannot handle pass through unchanged: {}",
          String.join(", ", plan.unsupported));
    }
    if (plan.unsupported.isEmpty()) {
      return GpuPartitions.map(
          input.select(cols(plan.inputColumns())), new FeatureKernel(plan), report);
    }
    // Carry the unsupported columns around the kernel and join them back by a row id. The ids are
    // materialized once (local checkpoint): evaluated twice over an input whose row order is not
    // deterministic (a shuffle, say), the two sides would number rows differently. The id's name
    // is one no input or output column has, so it replaces nothing.
    String rowId = plan.freeRowIdName();
    Dataset<Row> withId =
        input.withColumn(rowId, functions.monotonically_increasing_id()).localCheckpoint(true);
    plan.rowId = rowId;
    String[] in = plan.inputColumns();
    String[] withIdCols = java.util.Arrays.copyOf(in, in.length + 1);
    withIdCols[in.length] = rowId;
    Dataset<Row> feats =
        GpuPartitions.map(withId.select(cols(withIdCols)), new FeatureKernel(plan), report);
    List<Column> rest = new ArrayList<>();
    rest.add(col(quote(rowId)));
    for (org.apache.spark.sql.types.StructField f : input.schema().fields()) {
      if (FeaturePlan.kindOf(f.dataType()) == null) {
        rest.add(col(quote(f.name())));
      }
    }
    return feats.join(withId.select(rest.toArray(new Column[0])), rowId).drop(rowId);
  }

  /**
   * Refuses input columns Spark could not tell apart: two with one name, or, unless {@code
   * spark.sql.caseSensitive} is set, two whose names differ only in case.
   */
  static void checkNames(Dataset<Row> input) {
    boolean caseSensitive =
        Boolean.parseBoolean(input.sparkSession().conf().get("spark.sql.caseSensitive", "false"));
    Map<String, String> seen =
        caseSensitive ? new HashMap<>() : new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    for (String name : input.columns()) {
      String earlier = seen.putIfAbsent(name, name);
      if (earlier == null) {
        continue;
      }
      if (earlier.equals(name)) {
        throw new UsageException("the input has two columns named '" + name + "'; rename one");
      }
      throw new UsageException(
          "input columns '"
              + earlier
              + "' and '"
              + name
              + "' differ only in case, and Spark resolves names ignoring case: rename one, or"
              + " pass --conf spark.sql.caseSensitive=true");
    }
  }

  /**
   * Whether the first pass runs as kernels through the pipeline ({@link FirstPass}): unless the job
   * turned the pipeline off, or this JVM's executor found no GPU (local mode without one), where
   * Spark's own aggregation is the faster CPU path. On a cluster the driver has no executor, and
   * the executors run the kernels on their GPUs or, without one, their CPU implementations.
   */
  static boolean kernelFirstPass(SparkSession spark) {
    boolean enabled = Boolean.parseBoolean(spark.conf().get("spark.overlap.enabled", "true"));
    GpuStatus.State state = GpuStatus.current().state();
    return enabled
        && (state == GpuStatus.State.GPU
            || state == GpuStatus.State.NOT_STARTED && !spark.sparkContext().isLocal());
  }

  /** A column name as a SQL identifier, so that dots, spaces and backticks in it are literal. */
  private static String quote(String name) {
    return "`" + name.replace("`", "``") + "`";
  }

  static Column[] cols(String[] names) {
    Column[] out = new Column[names.length];
    for (int i = 0; i < names.length; i++) {
      out[i] = col(quote(names[i]));
    }
    return out;
  }

  static long run(SparkSession spark, String input, String output, int vocab, JobSummary summary) {
    PipelineReport report = PipelineReport.create(spark);
    Dataset<Row> in;
    try {
      in = spark.read().parquet(input);
    } catch (Exception e) { // AnalysisException, which Java sees as checked
      if (!(e instanceof AnalysisException a)
          || !"COLUMN_ALREADY_EXISTS".equals(a.getCondition())) {
        throw e;
      }
      String named = a.getMessageParameters().get("columnName");
      throw new UsageException(
          "input '"
              + input
              + "' has columns whose names differ only in case"
              + (named == null ? "" : " (" + named + ")")
              + ", and Spark resolves names ignoring case: rename one, or pass"
              + " --conf spark.sql.caseSensitive=true",
          e);
    }
    long start = System.nanoTime();
    FeaturePlan plan;
    if (kernelFirstPass(spark)) {
      PipelineReport first = PipelineReport.create(spark);
      PipelineReport counts = PipelineReport.create(spark);
      List<String> onSpark = new ArrayList<>();
      plan = FirstPass.kernels(in, vocab, first, counts, onSpark);
      summary.add("first pass", first);
      summary.add("exact counts", counts);
      summary.phase(
          "first pass",
          System.nanoTime() - start,
          "statistics and vocabularies: partial aggregates per batch, merged on the driver"
              + (onSpark.isEmpty() ? "" : "; vocabularies from Spark for " + onSpark));
    } else {
      plan = plan(in, vocab);
      summary.phase(
          "first pass", System.nanoTime() - start, "statistics and vocabularies, on Spark alone");
    }
    if (plan.nonFiniteCount() > 0) {
      summary.note(
          "non-finite",
          plan.nonFiniteCount() + " values in " + plan.nonFiniteColumns() + " treated as missing");
    }
    start = System.nanoTime();
    if (plan.unsupported.isEmpty()) {
      // The kernel's output is written as Parquet by the pipeline: encoded on the GPU, or by the
      // CPU implementation and Spark's writer on an executor without one.
      Written w =
          GpuPartitions.write(
              in.select(cols(plan.inputColumns())),
              new FeatureKernel(plan),
              ParquetOutput.to(output),
              report);
      summary.phase(
          "features",
          System.nanoTime() - start,
          "second pass and write: the features kernel, "
              + (w.gpuTasks() > 0
                  ? "its output encoded as Parquet on the GPU, only the file bytes copied back"
                  : "its CPU implementation, Parquet written by Spark")
              + String.format(Locale.ROOT, " (%d files, %.1f MB)", w.files(), w.bytes() / 1e6));
      summary.add("features", report);
      summary.rowsIn(report.rowsIn()); // the second pass reads every row once
      return w.rows();
    }
    Dataset<Row> out = features(in, plan, report);
    out.write().mode("overwrite").parquet(output);
    summary.phase(
        "features",
        System.nanoTime() - start,
        "second pass and write: the features kernel, its results back as rows and joined with the"
            + " columns passed through, Parquet written by Spark");
    summary.add("features", report);
    summary.rowsIn(report.rowsIn()); // the second pass reads every row once
    return spark.read().parquet(output).count();
  }
}
