package dev.overlap.features;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;

/**
 * The power-of-two scale of a numeric column whose magnitudes a double's squares cannot hold.
 *
 * <p>A deviation is the square root of a sum of squares. Squares of values near ±1e308 overflow to
 * infinity, and squares of values near 1e-200 underflow to 0; either way the standardized column
 * would be 0 or NaN on every row. Such a column's statistics are computed over {@code x · scale},
 * where {@code scale} is the power of two that brings its largest magnitude into [1, 2), and its
 * values are standardized as {@code (x · scale − mean · scale) / (deviation · scale)}. A power of
 * two changes no bit of a double's mantissa, so the z-scores are those of exact arithmetic up to
 * one rounding per step. Columns inside the safe range keep a scale of exactly 1 and today's
 * arithmetic.
 */
final class FeatureScale {
  /** Largest magnitudes between these powers of two need no scale. */
  static final int MAX_EXPONENT = 480;

  static final int MIN_EXPONENT = -400;

  private FeatureScale() {}

  /** The scale for a column whose present values lie in [min, max]; 1 when none is needed. */
  static double of(double min, double max) {
    double largest = Math.max(Math.abs(min), Math.abs(max));
    if (!Double.isFinite(largest) || largest == 0) {
      return 1.0;
    }
    int exponent = Math.getExponent(largest);
    return exponent > MAX_EXPONENT || exponent < MIN_EXPONENT ? Math.scalb(1.0, -exponent) : 1.0;
  }

  /**
   * Recomputes, by Spark's aggregation over {@code x · scale}, the mean and the scaled deviation of
   * the plan's columns whose scale is not 1. One job over those columns only; none when there are
   * none.
   */
  static void rescaleMoments(Dataset<Row> input, FeaturePlan plan) {
    List<FeaturePlan.Column> scaled = new ArrayList<>();
    List<Column> aggs = new ArrayList<>();
    for (FeaturePlan.Column c : plan.columns) {
      if (c.kind == FeaturePlan.Kind.NUMERIC && c.scale != 1.0) {
        Column x = SparkFirstPass.finiteValue(c).multiply(functions.lit(c.scale));
        scaled.add(c);
        aggs.add(functions.avg(x));
        aggs.add(functions.stddev_samp(x));
      }
    }
    if (scaled.isEmpty()) {
      return;
    }
    Row stats = input.agg(aggs.get(0), aggs.subList(1, aggs.size()).toArray(new Column[0])).first();
    for (int i = 0; i < scaled.size(); i++) {
      FeaturePlan.Column c = scaled.get(i);
      c.mean = stats.getDouble(2 * i) / c.scale;
      c.scaledStd = stats.isNullAt(2 * i + 1) ? 0.0 : stats.getDouble(2 * i + 1);
    }
  }
}
