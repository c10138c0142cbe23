package dev.overlap.executor.spark;

import dev.overlap.executor.device.DeviceResult;
import dev.overlap.executor.pipeline.BatchStages;
import dev.overlap.executor.pipeline.ResultBatch;
import dev.overlap.executor.rows.HostTable;
import org.apache.spark.sql.catalyst.InternalRow;

/**
 * What becomes of a GPU task's kernel output: the download stage that makes its results, and the
 * rows it counts for the report. One per output mode: rows back to Spark ({@link #ROWS}), or
 * Parquet files encoded on the device ({@link EncodedFiles}).
 *
 * @param <R> the download stage's result batches
 * @param <T> what the task's iterator yields
 */
interface TaskOutput<R extends ResultBatch<T>, T> {
  /** The task's stages with this output's download: the kernel stages' own, or one wrapping it. */
  <H extends AutoCloseable, D extends AutoCloseable> BatchStages<H, D, DeviceResult, R> finish(
      BatchStages<H, D, DeviceResult, HostTable> stages);

  /** The task's output rows, for the report. */
  long rowsOut(TaskDriver.Figures f);

  /** The output's rows, copied back column by column and handed to Spark. */
  TaskOutput<HostTable, InternalRow> ROWS =
      new TaskOutput<>() {
        @Override
        public <H extends AutoCloseable, D extends AutoCloseable>
            BatchStages<H, D, DeviceResult, HostTable> finish(
                BatchStages<H, D, DeviceResult, HostTable> stages) {
          return stages;
        }

        @Override
        public long rowsOut(TaskDriver.Figures f) {
          return f.rowsOut();
        }
      };
}
