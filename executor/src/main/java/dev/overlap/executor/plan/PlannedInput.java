package dev.overlap.executor.plan;

import ai.rapids.cudf.Table;
import dev.overlap.executor.input.parquet.ParquetInput;
import dev.overlap.executor.input.parquet.delta.KeptRows;
import dev.overlap.executor.task.TaskInput;
import java.io.Serializable;
import java.util.Iterator;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * A job's input path, decided once on the driver ({@link InputPlanner}): Spark's rows, the columnar
 * batches of a plan, a Parquet scan whose chunks the GPU decodes, or the RAPIDS Accelerator's
 * device batches. {@link #tasks} gives each partition's {@link TaskInput} to the job's task body,
 * whatever its output: {@code map} and {@code write} differ only in that body.
 */
sealed interface PlannedInput {
  /** What one task does with its partition's input. */
  interface TaskBody<T> extends Serializable {
    Iterator<T> run(TaskInput in) throws Exception;
  }

  /** One task per partition of the input, each running {@code body}. */
  <T> JavaRDD<T> tasks(TaskBody<T> body);

  /** Spark's rows, packed on the task thread. */
  record Rows(RDD<InternalRow> rows) implements PlannedInput {
    @Override
    public <T> JavaRDD<T> tasks(TaskBody<T> body) {
      return rows.toJavaRDD().mapPartitions(it -> body.run(new TaskInput.Rows(it)));
    }
  }

  /** A plan's columnar batches, its {@code columns} selected. */
  record Columnar(RDD<ColumnarBatch> batches, int[] columns) implements PlannedInput {
    @Override
    public <T> JavaRDD<T> tasks(TaskBody<T> body) {
      int[] cols = columns;
      return batches
          .toJavaRDD()
          .mapPartitions(it -> body.run(new TaskInput.Columnar(ColumnarPlans.select(cols, it))));
    }
  }

  /**
   * A Parquet scan: its files planned per partition on the executor, Spark's batches beside. For a
   * Delta table with deletion vectors, {@code deletedColumn} is the batches' column that marks a
   * deleted row (else -1): the host's path reads the rows it keeps.
   */
  record Parquet(RDD<ColumnarBatch> batches, int[] columns, int deletedColumn, ParquetInput input)
      implements PlannedInput {
    @Override
    public <T> JavaRDD<T> tasks(TaskBody<T> body) {
      int[] cols = columns;
      int marked = deletedColumn;
      ParquetInput parquet = input;
      return batches
          .toJavaRDD()
          .mapPartitionsWithIndex(
              (i, it) ->
                  body.run(
                      new TaskInput.Parquet(
                          parquet,
                          i,
                          marked < 0
                              ? new TaskInput.Columnar(ColumnarPlans.select(cols, it))
                              : new TaskInput.Rows(new KeptRows(it, cols, marked)))),
              false);
    }
  }

  /** The RAPIDS Accelerator's device batches. */
  record Rapids(RDD<Table> tables) implements PlannedInput {
    @Override
    public <T> JavaRDD<T> tasks(TaskBody<T> body) {
      return tables.toJavaRDD().mapPartitions(it -> body.run(new TaskInput.Rapids(it)));
    }
  }
}
