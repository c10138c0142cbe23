package dev.overlap.features;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.PipelineReport;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
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

  /** {@link FeaturePlan#forInput}. */
  static FeaturePlan forInput(FeaturePlan plan, StructType schema) {
    FeaturePlan copy = org.apache.commons.lang3.SerializationUtils.clone(plan);
    copy.layout = null;
    for (FeaturePlan.Column c : copy.columns) {
      StructField f = InputColumns.field(schema, c.name);
      if (f == null) {
        throw new FeatureInputException(
            "the input has no column '"
                + c.name
                + "', which the model was fitted with ("
                + FeatureKinds.name(c.kind)
                + "); add it, or fit the model on this input's columns");
      }
      if (FeatureKinds.of(f.dataType()) != c.kind) {
        throw new FeatureInputException(
            "column '"
                + c.name
                + "' is "
                + f.dataType().simpleString()
                + " here, but "
                + FeatureKinds.name(c.kind)
                + " when the model was fitted; cast it to that type, or fit the model again");
      }
      c.floating =
          c.floating || f.dataType() instanceof DoubleType || f.dataType() instanceof FloatType;
    }
    // A column passed through beside a feature of the same name would give the output that name
    // twice (names compared as Spark does by default, ignoring case).
    java.util.Set<String> features = new java.util.TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    features.addAll(List.of(copy.featureOutputSchema().fieldNames()));
    for (StructField f : passedThrough(schema, copy)) {
      if (features.contains(f.name())) {
        throw new FeatureInputException(
            "column '"
                + f.name()
                + "' of the input has the name of one of the model's features; rename or drop it"
                + " (a model fitted on an input with that column names its feature otherwise)");
      }
    }
    return copy;
  }
}
