package dev.overlap.executor.input.parquet;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DeviceMemoryBuffer;
import dev.overlap.executor.gpu.DeviceMemory;
import dev.overlap.executor.gpu.StreamPair;
import dev.overlap.executor.gpu.Uploaded;
import dev.overlap.executor.pipeline.Upload;
import dev.overlap.executor.resource.Closing;
import java.util.ArrayList;
import java.util.List;

/**
 * The upload of a task's Parquet batches: the compressed column chunks, one copy per batch on the
 * copy stream (the chunks lie back to back in the staging buffer). As for packed rows, each upload
 * waits for the previous batch's copy before it returns, so one copy is always queued.
 *
 * <p>Out of device memory ({@link DeviceMemory}): the pipeline drains and retries a failed upload,
 * then cuts a batch of several row groups on the host ({@link ChunkBatch#halves}, each part copying
 * the span of the buffer its chunks lie in); a single row group is the smallest batch.
 */
public final class ParquetUpload implements Upload<ChunkBatch, DeviceChunks> {
  private final StreamPair streams;
  private final String kernelName;
  // What the upload thread last asked device memory for, for an out-of-memory line.
  private volatile long asked = -1;

  public ParquetUpload(StreamPair streams, String kernelName) {
    this.streams = streams;
    this.kernelName = kernelName;
  }

  @Override
  public DeviceChunks upload(ChunkBatch h) {
    Cuda.Stream stream = streams.copyStream();
    List<AutoCloseable> made = new ArrayList<>();
    DeviceChunks batch;
    asked = Math.max(1, h.copyBytes());
    try {
      DeviceMemoryBuffer all = DeviceMemoryBuffer.allocate(asked, stream);
      made.add(all);
      if (h.copyBytes() > 0) {
        all.copyFromHostBufferAsync(0, h.buffer(), h.copyFrom(), h.copyBytes(), stream);
      }
      Cuda.Event copied = new Cuda.Event();
      made.add(copied);
      copied.record(stream);
      AutoCloseable readers = h.readersKeeper();
      batch =
          new DeviceChunks(null, all, copied, h.retain(), h.takePieces(), readers, h.decodeNanos());
    } catch (RuntimeException | Error e) {
      // The copy may already be reading the staging buffer: let it finish first.
      Closing.afterSync(e, stream::sync, made);
      throw e;
    }
    Uploaded previous = streams.swapLastUpload(batch);
    if (previous != null) {
      previous.awaitCopied();
    }
    return batch;
  }

  @Override
  public List<ChunkBatch> splitHost(ChunkBatch host) {
    return host.halves();
  }

  @Override
  public String outOfMemory(Throwable failure) {
    return DeviceMemory.describe("kernel " + kernelName + "'s Parquet upload", asked, failure);
  }
}
