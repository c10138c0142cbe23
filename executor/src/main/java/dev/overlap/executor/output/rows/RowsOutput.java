package dev.overlap.executor.output.rows;

import dev.overlap.executor.compute.DeviceResult;
import dev.overlap.executor.gpu.StreamPair;
import dev.overlap.executor.output.TaskOutput;
import dev.overlap.executor.pipeline.Download;
import dev.overlap.executor.pipeline.TaskDriver;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.StructType;

/** The rows output mode: the kernel's output copied back column by column and handed to Spark. */
public final class RowsOutput implements TaskOutput<HostTable, InternalRow> {
  private final StructType outputSchema;
  private final String kernelName;

  public RowsOutput(StructType outputSchema, String kernelName) {
    this.outputSchema = outputSchema;
    this.kernelName = kernelName;
  }

  @Override
  public Download<DeviceResult, HostTable> download(StreamPair streams, boolean pinnedResults) {
    return new RowsDownload(streams, outputSchema, kernelName, pinnedResults);
  }

  @Override
  public long rowsOut(TaskDriver.Figures f) {
    return f.rowsOut();
  }
}
