package dev.overlap.executor.input.parquet;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DeviceMemoryBuffer;
import dev.overlap.executor.gpu.DeviceMemory;
import dev.overlap.executor.gpu.GpuHealth;
import dev.overlap.executor.gpu.QueuedUpload;
import dev.overlap.executor.gpu.StreamPair;
import dev.overlap.executor.resource.Closing;
import java.util.ArrayList;
import java.util.List;

/**
 * The upload of a task's Parquet batches: the compressed column chunks, one copy per batch on the
 * copy stream (the chunks lie back to back in the staging buffer), one copy queued ahead ({@link
 * QueuedUpload}).
 *
 * <p>Out of device memory ({@link DeviceMemory}): the pipeline drains and retries a failed upload,
 * then cuts a batch of several row groups on the host ({@link ChunkBatch#halves}, each part copying
 * the span of the buffer its chunks lie in); a single row group is the smallest batch.
 */
public final class ParquetUpload extends QueuedUpload<ChunkBatch, DeviceChunks> {
  public ParquetUpload(StreamPair streams, String kernelName) {
    super(streams, "kernel " + kernelName + "'s Parquet upload");
  }

  @Override
  protected long deviceBytes(ChunkBatch h) {
    return Math.max(1, h.copyBytes());
  }

  @Override
  protected DeviceChunks copy(ChunkBatch h, Cuda.Stream stream) {
    List<AutoCloseable> made = new ArrayList<>();
    try {
      DeviceMemoryBuffer all = DeviceMemoryBuffer.allocate(deviceBytes(h), stream);
      made.add(all);
      if (h.copyBytes() > 0) {
        all.copyFromHostBufferAsync(0, h.buffer(), h.copyFrom(), h.copyBytes(), stream);
      }
      Cuda.Event copied = new Cuda.Event();
      made.add(copied);
      copied.record(stream);
      AutoCloseable readers = h.readersKeeper();
      return new DeviceChunks(
          null, all, copied, h.retain(), h.takePieces(), readers, h.decodeNanos());
    } catch (RuntimeException | Error e) {
      // The copy may already be reading the staging buffer: let it finish first.
      Closing.afterSync(e, stream::sync, made, GpuHealth::isFatal);
      throw e;
    }
  }

  @Override
  public List<ChunkBatch> splitHost(ChunkBatch host) {
    return host.halves();
  }

  @Override
  public String describe(ChunkBatch host) {
    return host.files();
  }
}
