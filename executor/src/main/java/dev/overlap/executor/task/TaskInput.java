package dev.overlap.executor.task;

import ai.rapids.cudf.Table;
import dev.overlap.executor.input.parquet.ParquetInput;
import dev.overlap.executor.plugin.ExecutorState;
import java.util.Iterator;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * One partition's input, as the task hands it to {@link PartitionRunner}: one kind per input path.
 * Which kind a job's tasks get is decided once on the driver (the engine); the runner then chooses
 * GPU or CPU, and the output mode is what the caller passes beside it.
 */
public sealed interface TaskInput {
  /** The rows the kernel's CPU implementation reads from this input. */
  Iterator<InternalRow> cpuRows();

  /** Spark's rows, packed on the task thread into staging buffers. */
  record Rows(Iterator<InternalRow> rows) implements TaskInput {
    @Override
    public Iterator<InternalRow> cpuRows() {
      return rows;
    }
  }

  /** Batches of the plan the engine found, its selected columns only. */
  record Columnar(Iterator<ColumnarBatch> batches) implements TaskInput {
    @Override
    public Iterator<InternalRow> cpuRows() {
      return CpuPath.flatten(batches);
    }
  }

  /**
   * A partition of a Parquet scan: the GPU decodes its files' column chunks, unless the job chose
   * the host path or a file needs it; {@code host}, Spark's own decode (its batches, or for a Delta
   * table with deletion vectors the rows they keep), is read then.
   */
  record Parquet(ParquetInput input, int partition, TaskInput host) implements TaskInput {
    @Override
    public Iterator<InternalRow> cpuRows() {
      return host.cpuRows();
    }
  }

  /**
   * The RAPIDS Accelerator's device batches of this partition (taken from RAPIDS on the driver):
   * straight to the compute stage, no packing and no upload. They need this executor's GPU.
   */
  record Rapids(Iterator<Table> tables) implements TaskInput {
    @Override
    public Iterator<InternalRow> cpuRows() {
      throw new IllegalStateException(
          "RAPIDS device batches reached executor "
              + ExecutorState.executorId()
              + ", where Overlap runs without a GPU ("
              + ExecutorState.status().reason()
              + "); set "
              + dev.overlap.executor.config.OverlapConf.RAPIDS_INPUT.key()
              + "=OFF");
    }
  }
}
