package dev.overlap.features;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.PipelineReport;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The second pass: the features kernel over the input, with passed-through columns joined back. */
final class FeatureTransform {
  private static final Logger LOG = LoggerFactory.getLogger("dev.overlap");

  /** The row id's name, unless an input or output column has it (see {@link #features}). */
  static final String ROW_ID = "__overlap_row_id";

  private FeatureTransform() {}

  /**
   * The second pass, with the first pass's plan: the features, then every input column the plan
   * does not encode, unchanged.
   */
  static Dataset<Row> features(Dataset<Row> input, FeaturePlan plan, PipelineReport report) {
    List<String> rest = passedThrough(input, plan);
    if (!plan.unsupported.isEmpty()) {
      LOG.warn(
          "features: columns of types it cannot handle pass through unchanged: {}",
          String.join(", ", plan.unsupported));
    }
    if (rest.isEmpty()) {
      return GpuPartitions.map(
          input.select(InputColumns.cols(plan.inputColumns())), new FeatureKernel(plan), report);
    }
    // Carry the other columns around the kernel and join them back by a row id. The ids are
    // materialized once (local checkpoint): evaluated twice over an input whose row order is not
    // deterministic (a shuffle, say), the two sides would number rows differently. The id's name
    // is one no input or output column has, so it replaces nothing.
    String rowId = plan.freeRowIdName(List.of(input.columns()));
    Dataset<Row> withId =
        input.withColumn(rowId, functions.monotonically_increasing_id()).localCheckpoint(true);
    plan.rowId = rowId;
    String[] in = plan.inputColumns();
    String[] withIdCols = java.util.Arrays.copyOf(in, in.length + 1);
    withIdCols[in.length] = rowId;
    Dataset<Row> feats =
        GpuPartitions.map(
            withId.select(InputColumns.cols(withIdCols)), new FeatureKernel(plan), report);
    List<String> joined = new ArrayList<>(rest);
    joined.add(0, rowId);
    return feats
        .join(withId.select(InputColumns.cols(joined.toArray(new String[0]))), rowId)
        .drop(rowId);
  }

  /** The input's columns that the plan does not encode, in input order. */
  static List<String> passedThrough(Dataset<Row> input, FeaturePlan plan) {
    java.util.Set<String> encoded = new java.util.HashSet<>(List.of(plan.inputColumns()));
    List<String> rest = new ArrayList<>();
    for (String name : input.columns()) {
      if (!encoded.contains(name)) {
        rest.add(name);
      }
    }
    return rest;
  }
}
