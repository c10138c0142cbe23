package dev.overlap.executor.input.rows;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.Table;
import dev.overlap.executor.gpu.DeviceMemory;
import dev.overlap.executor.gpu.StreamPair;
import dev.overlap.executor.gpu.Uploaded;
import dev.overlap.executor.pipeline.Upload;
import dev.overlap.executor.resource.Closing;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The upload of packed rows: a {@link HostBatch} into one device allocation made on the copy
 * stream, one async copy per used region.
 *
 * <p>Upload keeps one copy queued ahead: it issues batch {@code n}'s copies, records an event, and
 * then waits for batch {@code n-1}'s copies (issued by the previous upload, of any task) before it
 * returns. The copy engine therefore always has the next copy queued when one finishes, and no host
 * round trip sits between two copies.
 *
 * <p>Out of device memory ({@link DeviceMemory}): the pipeline drains and retries a failed upload,
 * then cuts the host batch by rows ({@link HostBatch#halves}).
 */
public final class PackedUpload implements Upload<HostBatch, DeviceBatch> {
  private final StreamPair streams;
  private final String kernelName;
  // The bytes the last upload asked for; written and read on the upload thread.
  private volatile long asked = -1;

  public PackedUpload(StreamPair streams, String kernelName) {
    this.streams = streams;
    this.kernelName = kernelName;
  }

  /**
   * The columns own slices of the allocation; the returned batch keeps a reference to {@code h}
   * until its copies are done.
   */
  @Override
  public DeviceBatch upload(HostBatch h) {
    Cuda.Stream stream = streams.copyStream();
    asked = h.deviceBytes();
    // What this call made and still owns; on failure the stream finishes before it is closed.
    List<AutoCloseable> made = new ArrayList<>();
    ColumnVector[] cols = new ColumnVector[h.columns()];
    Table table;
    Cuda.Event copied;
    try (DeviceMemoryBuffer all = DeviceMemoryBuffer.allocate(h.deviceBytes(), stream)) {
      long at = 0;
      for (int c = 0; c < cols.length; c++) {
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
      // pipeline hands the buffer back. Everything made is closed once, even when that sync fails.
      Closing.afterSync(e, stream::sync, made);
      throw e;
    }
    try {
      // The table holds the columns: drop this call's references, each once.
      Closing.all(Arrays.asList(cols));
    } catch (RuntimeException | Error e) {
      Closing.afterSync(e, stream::sync, List.of(table, copied));
      throw e;
    }
    DeviceBatch batch = new DeviceBatch(table, copied, h.retain());
    Uploaded previous = streams.swapLastUpload(batch);
    if (previous != null) {
      previous.awaitCopied();
    }
    return batch;
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

  @Override
  public String outOfMemory(Throwable failure) {
    return DeviceMemory.describe("kernel " + kernelName + "'s upload", asked, failure);
  }
}
