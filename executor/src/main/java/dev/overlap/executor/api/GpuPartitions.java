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

  /**
   * Runs {@code kernel} over {@code input} as {@link #map} does and writes its output as Parquet
   * into {@code output}'s folder, without turning it into rows: on an executor with a GPU, cuDF
   * encodes each batch's output on the device and only the encoded bytes come back; without one,
   * the kernel's CPU implementation and Spark's own Parquet writer do the same job. Files go
   * through Spark's commit protocol: the output appears whole, with {@code _SUCCESS}, or not at
   * all. As with Spark's own writer, the first task writes a file of no rows with the schema when
   * it has no rows, so that an output of no rows reads back with its columns. Runs at once (an
   * action).
   *
   * @throws IllegalArgumentException before any work starts, as {@link #map} does, and when the
   *     output exists and is not an empty folder
   */
  public static Written write(Dataset<Row> input, GpuKernel kernel, ParquetOutput output) {
    return write(input, kernel, output, null);
  }

  /** As {@link #write(Dataset, GpuKernel, ParquetOutput)}, recording figures in {@code report}. */
  public static Written write(
      Dataset<Row> input, GpuKernel kernel, ParquetOutput output, PipelineReport report) {
    return Engine.get().write(input, kernel, output, report);
  }
}
