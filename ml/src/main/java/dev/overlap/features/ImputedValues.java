package dev.overlap.features;

import static org.apache.spark.sql.functions.col;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;

/**
 * What a missing number becomes ({@link FeaturePlan.Column#fill}) by {@code imputeStrategy}, as
 * Spark ML's {@code Imputer} computes it over the present values (nulls, NaN and infinities left
 * out): {@code mean}, the first pass's mean; {@code median}, the exact median of {@code Imputer}
 * with {@code relativeError} 0 (Spark's {@code approxQuantile} at 0.5 with no error: the lower
 * middle value of an even count); {@code mode}, the most frequent value, the smallest of ties. The
 * median and the mode come from Spark's own aggregation, on the GPU path too: one job for every
 * median, one per column for the modes; the kernels then impute with them.
 */
final class ImputedValues {
  private ImputedValues() {}

  /** Sets the fill of {@code plan}'s numeric columns by {@code strategy}; a mean is set already. */
  static void fill(Dataset<Row> input, FeaturePlan plan, String strategy) {
    List<FeaturePlan.Column> numbers = new ArrayList<>();
    for (FeaturePlan.Column c : plan.columns) {
      if (c.kind == FeaturePlan.Kind.NUMERIC && c.missing < plan.rows) {
        numbers.add(c);
      }
    }
    if (strategy.equals("mean") || numbers.isEmpty()) {
      return;
    }
    List<Column> values = new ArrayList<>();
    String[] names = new String[numbers.size()];
    for (int i = 0; i < names.length; i++) {
      names[i] = "v" + i; // the aliases keep input names out of approxQuantile's parsing
      values.add(SparkFirstPass.finiteValue(numbers.get(i)).as(names[i]));
    }
    Dataset<Row> present = input.select(values.toArray(new Column[0]));
    if (strategy.equals("median")) {
      double[][] medians = present.stat().approxQuantile(names, new double[] {0.5}, 0.0);
      for (int i = 0; i < names.length; i++) {
        numbers.get(i).fill = medians[i][0];
      }
      return;
    }
    for (int i = 0; i < names.length; i++) {
      Row mode =
          present
              .where(col(names[i]).isNotNull())
              .groupBy(col(names[i]).as("value"))
              .agg(functions.count(functions.lit(1)).as("n"))
              .orderBy(col("n").desc(), col("value").asc())
              .first();
      numbers.get(i).fill = mode.getDouble(0);
    }
  }
}
