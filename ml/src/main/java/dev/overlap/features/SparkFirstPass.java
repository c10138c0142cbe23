package dev.overlap.features;

import static org.apache.spark.sql.functions.col;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first pass by Spark's own aggregation: means, deviations, minimums and maximums, mean days
 * and instants, vocabularies. {@link FirstPass} computes the same as kernels; this is the path of
 * executors without a GPU in local mode and of {@code spark.overlap.enabled=false}.
 */
final class SparkFirstPass {
  private static final Logger LOG = LoggerFactory.getLogger("dev.overlap");

  private SparkFirstPass() {}

  /** The first pass: statistics and vocabularies. */
  static FeaturePlan plan(Dataset<Row> input, int vocabularySize) {
    InputColumns.check(input);
    FeaturePlan plan = new FeaturePlan(input.schema(), vocabularySize);
    List<Column> aggs = new ArrayList<>();
    aggs.add(functions.count(functions.lit(1)));
    for (FeaturePlan.Column c : plan.columns) {
      String q = InputColumns.quote(c.name);
      aggs.add(functions.count(col(q))); // the non-null values
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
          aggs.add(functions.avg(functions.expr(FeatureKinds.epochSql(c.kind, q))));
          break;
        default:
          break;
      }
    }
    if (!plan.columns.isEmpty()) {
      Row stats =
          input.agg(aggs.get(0), aggs.subList(1, aggs.size()).toArray(new Column[0])).first();
      plan.rows = stats.getLong(0);
      int at = 1;
      for (FeaturePlan.Column c : plan.columns) {
        c.missing = plan.rows - stats.getLong(at);
        at++;
        switch (c.kind) {
          case NUMERIC:
            if (c.floating) {
              c.nonFinite = stats.getLong(at);
              c.missing += c.nonFinite;
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
    plan.columns.forEach(c -> c.fill = c.mean); // imputeStrategy mean; ImputedValues sets others
    warnNonFinite(plan);
    for (FeaturePlan.Column c : plan.columns) {
      if (c.kind == FeaturePlan.Kind.STRING) {
        // The most frequent values; the first is the imputed value even with no vocabulary.
        c.setVocabulary(sparkTop(input, c.name, Math.max(1, vocabularySize)), vocabularySize);
      }
    }
    return plan;
  }

  /**
   * Numeric column {@code c} as double, null where it is missing: NaN and infinities of a float or
   * double column count as missing, as nulls do.
   */
  static Column finiteValue(FeaturePlan.Column c) {
    Column x = col(InputColumns.quote(c.name)).cast("double");
    return c.floating ? functions.when(functions.not(nonFinite(c)), x) : x;
  }

  /** Whether float or double column {@code c} is NaN or infinite; null for a null value. */
  private static Column nonFinite(FeaturePlan.Column c) {
    Column x = col(InputColumns.quote(c.name)).cast("double");
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
  static java.util.LinkedHashMap<String, Long> sparkTop(Dataset<Row> input, String name, int n) {
    java.util.LinkedHashMap<String, Long> top = new java.util.LinkedHashMap<>();
    for (Row r :
        input
            .where(col(InputColumns.quote(name)).isNotNull())
            .groupBy(col(InputColumns.quote(name)).as("value"))
            .agg(functions.count(functions.lit(1)).as("n"))
            .orderBy(col("n").desc(), col("value").asc())
            .limit(n)
            .collectAsList()) {
      top.put(r.getString(0), r.getLong(1));
    }
    return top;
  }
}
