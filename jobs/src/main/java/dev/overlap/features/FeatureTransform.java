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
 * encoded columns, then the columns passed through, and returns the features, then those columns
 * unchanged: each output row is its input row's. So the result is a narrow map of the input, lazy
 * like any Dataset: it adds no Spark job before an action (no checkpoint, no join), and the input's
 * partitions and row order are kept.
 */
final class FeatureTransform {
  private static final Logger LOG = LoggerFactory.getLogger("dev.overlap");

  private FeatureTransform() {}

  /**
   * The second pass, with the first pass's plan: the features, then every input column the plan
   * does not encode, unchanged, in input order.
   */
  static Dataset<Row> features(Dataset<Row> input, FeaturePlan plan, PipelineReport report) {
    if (!plan.unsupported.isEmpty()) {
      LOG.warn(
          "features: columns of types it cannot handle pass through unchanged: {}",
          String.join(", ", plan.unsupported));
    }
    FeaturePlan p = org.apache.commons.lang3.SerializationUtils.clone(plan);
    p.passed = passedThrough(input.schema(), plan);
    List<String> in = new ArrayList<>(List.of(p.inputColumns()));
    p.passed.forEach(f -> in.add(f.name()));
    return GpuPartitions.map(
        input.select(InputColumns.cols(in.toArray(new String[0]))), new FeatureKernel(p), report);
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
