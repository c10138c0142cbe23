package dev.overlap.executor.output;

import dev.overlap.executor.compute.DeviceResult;
import dev.overlap.executor.gpu.StreamPair;
import dev.overlap.executor.pipeline.Download;
import dev.overlap.executor.pipeline.ResultBatch;
import dev.overlap.executor.pipeline.TaskDriver;

/**
 * What becomes of a GPU task's kernel output: the download stage that makes its results, and the
 * rows it counts for the report. One per output mode, each in a folder of its own: rows back to
 * Spark ({@code output.rows}), or Parquet files encoded on the device ({@code output.parquet}).
 *
 * @param <R> the download stage's result batches
 * @param <T> what the task's iterator yields
 */
public interface TaskOutput<R extends ResultBatch<T>, T> {
  /** The task's download stage, on the device-to-host stream of {@code streams}. */
  Download<DeviceResult, R> download(StreamPair streams, boolean pinnedResults);

  /** The task's output rows, for the report. */
  long rowsOut(TaskDriver.Figures f);
}
