package dev.overlap.features;

import static org.apache.spark.sql.functions.col;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;

/**
 * {@code handleInvalid} at transform time, the same on the GPU and CPU paths because it acts on the
 * input before the kernel: {@code keep} leaves it as it is (such a string gets index N); {@code
 * skip} leaves out every row with a string outside its column's vocabulary; {@code error} fails the
 * action on the first, naming the column and the value. Nulls are missing, not invalid.
 */
final class InvalidStrings {
  private InvalidStrings() {}

  /** The input with the rows handleInvalid leaves out dropped, or a check that fails on them. */
  static Dataset<Row> valid(Dataset<Row> in, FeaturePlan p, String mode) {
    if (mode.equals("keep")) {
      return in;
    }
    Column invalid = functions.lit(false);
    List<Column> checks = new ArrayList<>();
    for (FeaturePlan.Column c : p.columns) {
      // Only a string that gets an index can be outside the vocabulary.
      if (c.kind != FeaturePlan.Kind.STRING || !p.kindFeatures(c).contains("idx")) {
        continue;
      }
      Column x = col(InputColumns.quote(c.name));
      Column outside = x.isNotNull().and(functions.not(x.isin(c.vocabulary.toArray())));
      invalid = invalid.or(outside);
      checks.add(
          functions
              .when(
                  outside,
                  functions.raise_error(
                      functions.concat(
                          functions.lit("column '" + c.name + "' holds '"),
                          x,
                          functions.lit(
                              "', which is not in the model's vocabulary of "
                                  + c.vocabulary.size()
                                  + " values; set handleInvalid to keep or skip"))))
              .otherwise(functions.lit(true)));
    }
    if (checks.isEmpty()) {
      return in;
    }
    if (mode.equals("skip")) {
      return in.where(functions.not(invalid));
    }
    Column all = checks.get(0);
    for (Column c : checks.subList(1, checks.size())) {
      all = all.and(c);
    }
    return in.where(all);
  }
}
