package dev.overlap.executor.api;

import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.cudf.ColumnType;
import dev.overlap.executor.spark.PartitionRunner;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

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
   *     kernel's output schema has a type the GPU path does not carry (the message names it)
   */
  public static Dataset<Row> map(Dataset<Row> input, GpuKernel kernel) {
    return map(input, kernel, null);
  }

  /** As {@link #map(Dataset, GpuKernel)}, recording the pipeline's figures in {@code report}. */
  public static Dataset<Row> map(Dataset<Row> input, GpuKernel kernel, PipelineReport report) {
    StructType in = input.schema();
    ColumnType.forSchema(in, "input of " + kernel.name());
    StructType out = kernel.outputSchema(in);
    ColumnType.forSchema(out, "output schema of " + kernel.name());

    org.apache.spark.sql.classic.Dataset<Row> ds =
        (org.apache.spark.sql.classic.Dataset<Row>) input;
    // A key the job set on the session with a typo fails here as it would at start.
    OverlapConf.checkKnownKeys(
        scala.jdk.javaapi.CollectionConverters.asJava(ds.sparkSession().conf().getAll().keySet()));
    // Keys that are not startup-only are taken from the session, so a job can set them.
    PartitionRunner runner =
        new PartitionRunner(
            kernel,
            in,
            out,
            report,
            OverlapConf.jobSettings(
                k -> ds.sparkSession().conf().getOption(k).getOrElse(() -> null)));
    SparkPlan plan = ds.queryExecution().executedPlan();
    SparkPlan columnar = PartitionRunner.columnarChild(plan);
    RDD<InternalRow> result;
    if (columnar != null) {
      RDD<ColumnarBatch> batches = columnar.executeColumnar();
      result = batches.toJavaRDD().mapPartitions(runner::runColumnar).rdd();
    } else {
      result = ds.queryExecution().toRdd().toJavaRDD().mapPartitions(runner::runRows).rdd();
    }
    return ((org.apache.spark.sql.classic.SparkSession) ds.sparkSession())
        .internalCreateDataFrame(result, out, false);
  }
}
