package dev.overlap.executor.input.rows;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.Table;
import dev.overlap.executor.gpu.DeviceMemory;
import dev.overlap.executor.gpu.GpuHealth;
import dev.overlap.executor.gpu.QueuedUpload;
import dev.overlap.executor.gpu.StreamPair;
import dev.overlap.executor.resource.Closing;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The upload of packed rows: a {@link HostBatch} into one device allocation made on the copy
 * stream, one copy queued ahead ({@link QueuedUpload}); nested columns and their children into the
 * same allocation ({@link NestedUpload}).
 *
 * <p>Out of device memory ({@link DeviceMemory}): the pipeline drains and retries a failed upload,
 * then cuts the host batch by rows ({@link HostBatch#halves}).
 */
public final class PackedUpload extends QueuedUpload<HostBatch, DeviceBatch> {
  public PackedUpload(StreamPair streams, String kernelName) {
    super(streams, "kernel " + kernelName + "'s upload");
  }

  @Override
  protected long deviceBytes(HostBatch h) {
    return h.deviceBytes();
  }

  /**
   * One device allocation, one async copy per used region. The columns own slices of the
   * allocation; the returned batch keeps a reference to {@code h} until its copies are done.
   */
  @Override
  protected DeviceBatch copy(HostBatch h, Cuda.Stream stream) {
    // What this call made and still owns; on failure the stream finishes before it is closed.
    List<AutoCloseable> made = new ArrayList<>();
    ColumnVector[] cols = new ColumnVector[h.columns()];
    Table table;
    Cuda.Event copied;
    try (DeviceMemoryBuffer all = DeviceMemoryBuffer.allocate(h.deviceBytes(), stream)) {
      long at = 0;
      for (int c = 0; c < cols.length; c++) {
        if (h.nested(c) != null) {
          long[] next = {at};
          cols[c] = NestedUpload.upload(h.nested(c), all, next, stream, made);
          made.add(cols[c]);
          at = next[0];
          continue;
        }
        DeviceMemoryBuffer valid = null;
        if (h.nullCount(c) > 0) {
          valid = slice(all, at, h.validityLength(), made);
          all.copyFromHostBufferAsync(
              at, h.staging(), h.validityOffset(c), h.validityLength(), stream);
          at += BatchLayout.align(h.validityLength());
        }
        long dataLen = h.dataLength(c);
        DeviceMemoryBuffer data = slice(all, at, dataLen, made);
        if (dataLen > 0) {
          all.copyFromHostBufferAsync(at, h.staging(), h.dataOffset(c), dataLen, stream);
        }
        at += BatchLayout.align(Math.max(1, dataLen));
        DeviceMemoryBuffer offsets = null;
        if (h.hasOffsets(c)) {
          offsets = slice(all, at, h.offsetsLength(c), made);
          all.copyFromHostBufferAsync(
              at, h.offsetsBuffer(c), h.offsetsOffset(c), h.offsetsLength(c), stream);
          at += BatchLayout.align(h.offsetsLength(c));
        }
        cols[c] =
            new ColumnVector(
                h.dtype(c), h.rows(), Optional.of(h.nullCount(c)), data, valid, offsets);
        // The column owns the slices now.
        made.removeAll(Arrays.asList(data, valid, offsets));
        made.add(cols[c]);
      }
      copied = new Cuda.Event();
      made.add(copied);
      copied.record(stream);
      table = new Table(cols); // its own reference to each column
      made.add(table);
    } catch (RuntimeException | Error e) {
      // A copy may already be reading the staging buffer: let the stream finish before the
      // pipeline hands the buffer back. Everything made is closed once, even when that sync fails;
      // after a fatal CUDA error nothing is, as nothing may be freed into a broken context.
      Closing.afterSync(e, stream::sync, made, GpuHealth::isFatal);
      throw e;
    }
    try {
      // The table holds the columns: drop this call's references, each once.
      Closing.all(Arrays.asList(cols));
    } catch (RuntimeException | Error e) {
      Closing.afterSync(e, stream::sync, List.of(table, copied), GpuHealth::isFatal);
      throw e;
    }
    return new DeviceBatch(table, copied, h.retain());
  }

  private static DeviceMemoryBuffer slice(
      DeviceMemoryBuffer all, long at, long len, List<AutoCloseable> made) {
    DeviceMemoryBuffer s = all.slice(at, len);
    made.add(s);
    return s;
  }

  @Override
  public List<HostBatch> splitHost(HostBatch host) {
    return host.halves();
  }
}
