package dev.overlap.executor.output.rows;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.HostColumnVector;
import ai.rapids.cudf.HostMemoryAllocator;
import ai.rapids.cudf.Table;
import dev.overlap.executor.compute.DeviceResult;
import dev.overlap.executor.gpu.GpuHealth;
import dev.overlap.executor.gpu.ResultMemory;
import dev.overlap.executor.gpu.StreamPair;
import dev.overlap.executor.pipeline.Download;
import dev.overlap.executor.resource.Closing;
import java.util.Arrays;
import org.apache.spark.sql.types.StructType;

/**
 * The download of the rows output: waits for the kernel's event, copies its output back column by
 * column on the device-to-host stream (into the pinned pool while it has room) and synchronizes
 * that stream before returning.
 */
public final class RowsDownload implements Download<DeviceResult, HostTable> {
  private final StreamPair streams;
  private final StructType outputSchema;
  private final String kernelName;
  private final boolean pinnedResults;

  public RowsDownload(
      StreamPair streams, StructType outputSchema, String kernelName, boolean pinnedResults) {
    this.streams = streams;
    this.outputSchema = outputSchema;
    this.kernelName = kernelName;
    this.pinnedResults = pinnedResults;
  }

  @Override
  public HostTable download(DeviceResult result) {
    result.awaitComputed();
    Table out = result.output();
    Cuda.Stream stream = streams.downloadStream();
    HostColumnVector[] host = new HostColumnVector[out.getNumberOfColumns()];
    HostMemoryAllocator allocator =
        pinnedResults ? ResultMemory.pinnedFirst() : ResultMemory.PAGEABLE;
    try {
      for (int i = 0; i < host.length; i++) {
        host[i] = out.getColumn(i).copyToHostAsync(stream, allocator);
      }
      stream.sync();
    } catch (RuntimeException | Error e) {
      // Copies already queued may still be writing into the host columns: let the stream finish
      // before freeing them.
      Closing.afterSync(e, stream::sync, Arrays.asList(host), GpuHealth::isFatal);
      throw e;
    }
    return new HostTable(outputSchema, host, kernelName);
  }
}
