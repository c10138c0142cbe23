package dev.overlap.executor.api;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * The entry point: applies a {@link GpuKernel} to a Dataset, partition by partition, through the
 * executor's GPU pipeline.
 *
 * <pre>{@code
 * Dataset<Row> out = GpuPartitions.map(spark.read().parquet(path), new MyKernel());
 * }</pre>
 *
 * <p>When the input plan is a columnar scan (Spark's vectorized Parquet or ORC reader), batches are
 * packed column by column with bulk copies; otherwise row by row. The result is lazy, like any
 * Dataset: nothing runs until an action.
 */
@Public
public final class GpuPartitions {
  private GpuPartitions() {}

  /**
   * @throws IllegalArgumentException before any work starts, when a column of the input or of the
   *     kernel's output schema has a type the GPU path does not carry (the message names it), or
   *     when a {@code spark.overlap.*} key set on the session is unknown or has a bad value ({@code
   *     OverlapConfigException}, naming the key)
   */
  public static Dataset<Row> map(Dataset<Row> input, GpuKernel kernel) {
    return map(input, kernel, null);
  }

  /** As {@link #map(Dataset, GpuKernel)}, recording the pipeline's figures in {@code report}. */
  public static Dataset<Row> map(Dataset<Row> input, GpuKernel kernel, PipelineReport report) {
    return Engine.get().map(input, kernel, report);
  }
}
