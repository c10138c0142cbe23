package dev.overlap.features;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.PipelineReport;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The second pass: the features kernel over the input, partition by partition. The kernel takes the
 * columns {@link FeatureLayout} names and returns the features beside the columns it passes through
 * unchanged: each output row is its input row's. So the result is a narrow map of the input, lazy
 * like any Dataset: it adds no Spark job before an action (no checkpoint, no join), and the input's
 * partitions and row order are kept.
 */
final class FeatureTransform {
  private static final Logger LOG = LoggerFactory.getLogger("dev.overlap");

  private FeatureTransform() {}

  /**
   * The features, then the columns the plan does not encode, unchanged, in input order ({@code
   * keepInputs = false}, one column per feature).
   */
  static Dataset<Row> features(Dataset<Row> input, FeaturePlan plan, PipelineReport report) {
    FeatureLayout layout = FeatureLayout.of(input.schema(), plan, false, "", "");
    return features(input, plan, layout, "", report);
  }

  /**
   * The second pass, with the first pass's plan, over {@code input} laid out as {@code layout}
   * ({@link FeatureLayout#of}): the features, and the input columns the layout keeps, unchanged.
   */
  static Dataset<Row> features(
      Dataset<Row> input,
      FeaturePlan plan,
      FeatureLayout layout,
      String outputType,
      PipelineReport report) {
    if (!plan.unsupported.isEmpty()) {
      LOG.warn(
          "features: columns of types it cannot handle pass through unchanged: {}",
          String.join(", ", plan.unsupported));
    }
    FeaturePlan p = org.apache.commons.lang3.SerializationUtils.clone(plan);
    p.layout = layout;
    Dataset<Row> mapped =
        GpuPartitions.map(
            input.select(InputColumns.cols(layout.inputNames.toArray(new String[0]))),
            new FeatureKernel(p),
            report);
    return FeatureVectors.spark(mapped, layout, p, outputType);
  }

  /**
   * The columns of {@code schema} that {@code plan} does not encode, in input order. An encoded
   * column is found by name as {@link FeaturePlan#forInput} finds it: exactly, or else ignoring
   * case.
   */
  static List<StructField> passedThrough(StructType schema, FeaturePlan plan) {
    Set<String> encoded = new HashSet<>();
    for (FeaturePlan.Column c : plan.columns) {
      StructField f = InputColumns.field(schema, c.name);
      if (f != null) {
        encoded.add(f.name());
      }
    }
    List<StructField> rest = new ArrayList<>();
    for (StructField f : schema.fields()) {
      if (!encoded.contains(f.name())) {
        rest.add(f);
      }
    }
    return List.copyOf(rest);
  }

  /** The names of {@link #passedThrough}'s columns. */
  static List<String> passedThroughNames(StructType schema, FeaturePlan plan) {
    return passedThrough(schema, plan).stream().map(StructField::name).toList();
  }
}
