package dev.overlap.executor.device;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.HostColumnVector;
import ai.rapids.cudf.HostMemoryAllocator;
import ai.rapids.cudf.HostMemoryBuffer;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.GpuKernel;
import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.pack.BatchLayout;
import dev.overlap.executor.pack.HostBatch;
import dev.overlap.executor.pipeline.BatchStages;
import dev.overlap.executor.pipeline.Closing;
import dev.overlap.executor.rows.HostTable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.types.StructType;

/**
 * The GPU work of one task's batches: upload on the copy stream, the kernel on the compute thread's
 * per-thread default stream, download on the device-to-host stream.
 *
 * <p>Upload keeps one copy queued ahead: it issues batch {@code n}'s copies, records an event, and
 * then waits for batch {@code n-1}'s copies (issued by the previous upload, of any task) before it
 * returns. The copy engine therefore always has the next copy queued when one finishes, and no host
 * round trip sits between two copies. The compute stage waits for its own batch's event before the
 * kernel and synchronizes its stream after it (unless {@link Options#asyncCompute}); the {@link
 * DeviceResult} it hands on keeps the input batch until the kernel's event, so no memory a kernel
 * reads is freed early. Download waits for that event, copies the results back (into the pinned
 * pool while it has room) and synchronizes its stream before returning.
 *
 * <p>Out of device memory ({@link DeviceMemory}): the pipeline drains and retries a failed upload
 * or kernel, then cuts the host batch by rows ({@link HostBatch#halves}) or splits the uploaded one
 * on the device ({@link DeviceBatch#halves}). A kernel's output counts in the device budget until
 * it is downloaded.
 */
public final class CudfStages
    implements BatchStages<HostBatch, DeviceBatch, DeviceResult, HostTable> {
  /**
   * How the stages work.
   *
   * @param copyPieceBytes the largest single host-to-device copy; a longer region is copied in
   *     pieces of this size, one async copy each
   * @param asyncCompute when true the compute stage waits for a batch's copies on the device and
   *     returns as soon as the kernel's work is queued; the download stage waits for it on the host
   * @param pinnedResults copy results back into the pinned pool while it has room
   */
  public record Options(long copyPieceBytes, boolean asyncCompute, boolean pinnedResults) {
    public Options {
      if (copyPieceBytes <= 0) {
        throw new IllegalArgumentException("copyPieceBytes must be positive: " + copyPieceBytes);
      }
    }

    public static Options defaults() {
      return new Options(Long.MAX_VALUE, false, true);
    }
  }

  private final StreamPair streams;
  private final GpuKernel kernel;
  private final StructType outputSchema;
  private final Options options;
  // The bytes the last upload asked for; written and read on the upload thread.
  private volatile long uploadAsked = -1;

  public CudfStages(StreamPair streams, GpuKernel kernel, StructType outputSchema) {
    this(streams, kernel, outputSchema, Options.defaults());
  }

  public CudfStages(
      StreamPair streams, GpuKernel kernel, StructType outputSchema, Options options) {
    this.streams = streams;
    this.kernel = kernel;
    this.outputSchema = outputSchema;
    this.options = options;
  }

  private void copy(
      DeviceMemoryBuffer dst,
      long dstAt,
      HostMemoryBuffer src,
      long srcAt,
      long len,
      Cuda.Stream stream) {
    for (long done = 0; done < len; done += options.copyPieceBytes()) {
      long n = Math.min(options.copyPieceBytes(), len - done);
      dst.copyFromHostBufferAsync(dstAt + done, src, srcAt + done, n, stream);
    }
  }

  /**
   * Copies a packed batch into one device allocation made on the copy stream, one async copy per
   * used region, records an event, then waits for the previous batch's copies. The columns own
   * slices of the allocation; the returned batch keeps a reference to {@code h} until its copies
   * are done.
   */
  @Override
  public DeviceBatch upload(HostBatch h) {
    Cuda.Stream stream = streams.copyStream();
    List<AutoCloseable> made = new ArrayList<>();
    DeviceBatch batch;
    uploadAsked = h.deviceBytes();
    try (DeviceMemoryBuffer all = DeviceMemoryBuffer.allocate(h.deviceBytes(), stream)) {
      long at = 0;
      ColumnVector[] cols = new ColumnVector[h.columns()];
      for (int c = 0; c < h.columns(); c++) {
        DeviceMemoryBuffer valid = null;
        if (h.nullCount(c) > 0) {
          valid = all.slice(at, h.validityLength());
          made.add(valid);
          copy(all, at, h.staging(), h.validityOffset(c), h.validityLength(), stream);
          at += BatchLayout.align(h.validityLength());
        }
        long dataLen = h.dataLength(c);
        DeviceMemoryBuffer data = all.slice(at, dataLen);
        made.add(data);
        if (dataLen > 0) {
          copy(all, at, h.staging(), h.dataOffset(c), dataLen, stream);
        }
        at += BatchLayout.align(Math.max(1, dataLen));
        DeviceMemoryBuffer offsets = null;
        if (h.hasOffsets(c)) {
          offsets = all.slice(at, h.offsetsLength(c));
          made.add(offsets);
          copy(all, at, h.offsetsBuffer(c), h.offsetsOffset(c), h.offsetsLength(c), stream);
          at += BatchLayout.align(h.offsetsLength(c));
        }
        cols[c] =
            new ColumnVector(
                h.dtype(c), h.rows(), Optional.of(h.nullCount(c)), data, valid, offsets);
        // The column owns the slices now.
        made.remove(data);
        made.remove(valid);
        made.remove(offsets);
        made.add(cols[c]);
      }
      Cuda.Event copied = new Cuda.Event();
      made.add(copied);
      copied.record(stream);
      Table t = new Table(cols); // takes its own reference to each column
      made.remove(copied);
      Closing.all(made);
      made.clear();
      batch = new DeviceBatch(t, copied, h.retain());
    } catch (RuntimeException e) {
      // A copy may already be reading the staging buffer: let the stream finish before the
      // pipeline hands the buffer back. Everything made is closed even when that sync fails.
      throw Closing.afterSync(e, stream::sync, made);
    } catch (Error e) {
      throw Closing.afterSync(e, stream::sync, made);
    }
    Uploaded previous = streams.swapLastUpload(batch);
    if (previous != null) {
      previous.awaitCopied();
    }
    return batch;
  }

  @Override
  public DeviceResult compute(DeviceBatch batch) {
    if (options.asyncCompute()) {
      batch.streamWaitsForCopies(Cuda.DEFAULT_STREAM);
    } else {
      batch.awaitCopied();
    }
    return runKernel(batch.table(), batch.retain());
  }

  /**
   * Runs the kernel on {@code input} on this thread's stream; the result keeps {@code keep} (what
   * the kernel reads) until the kernel's work is done, and closes it then. On failure {@code keep}
   * is closed here.
   */
  DeviceResult runKernel(Table input, AutoCloseable keep) {
    Table out;
    try {
      out = kernel.apply(input);
      if (out == null) {
        throw new IllegalStateException(kernel.name() + " returned null instead of a Table");
      }
    } catch (RuntimeException e) {
      throw Closing.after(e, List.of(keep));
    } catch (Error e) {
      throw Closing.after(e, List.of(keep));
    }
    boolean sameAsInput = out == input;
    if (sameAsInput) {
      // The pipeline closes the input after this stage: keep our own references.
      ColumnVector[] cols = new ColumnVector[input.getNumberOfColumns()];
      for (int i = 0; i < cols.length; i++) {
        cols[i] = input.getColumn(i);
      }
      out = new Table(cols);
    }
    Cuda.Event computed;
    try {
      if (!options.asyncCompute()) {
        // Kernels ran on this thread's per-thread default stream: finish them here.
        Cuda.DEFAULT_STREAM.sync();
      }
      computed = new Cuda.Event();
    } catch (RuntimeException e) {
      throw Closing.after(e, List.of(out, keep));
    }
    try {
      computed.record(Cuda.DEFAULT_STREAM);
    } catch (RuntimeException e) {
      throw Closing.after(e, List.of(out, computed, keep));
    }
    // What the kernel reads stays referenced until its work is done (DeviceResult.close).
    return new DeviceResult(out, computed, keep, sameAsInput);
  }

  @Override
  public HostTable download(DeviceResult result) {
    result.awaitComputed();
    Table out = result.output();
    Cuda.Stream stream = streams.downloadStream();
    HostColumnVector[] host = new HostColumnVector[out.getNumberOfColumns()];
    HostMemoryAllocator allocator =
        options.pinnedResults() ? ResultMemory.pinnedFirst() : ResultMemory.PAGEABLE;
    try {
      for (int i = 0; i < host.length; i++) {
        host[i] = out.getColumn(i).copyToHostAsync(stream, allocator);
      }
      stream.sync();
    } catch (RuntimeException e) {
      // Copies already queued may still be writing into the host columns: let the stream finish
      // before freeing them.
      throw Closing.afterSync(e, stream::sync, Arrays.asList(host));
    }
    return new HostTable(outputSchema, host, kernel.name());
  }

  @Override
  public String outOfMemory(PipelineStage stage, Throwable failure) {
    return stage == PipelineStage.UPLOAD
        ? DeviceMemory.describe("kernel " + kernel.name() + "'s upload", uploadAsked, failure)
        : DeviceMemory.describe("kernel " + kernel.name(), -1, failure);
  }

  /** The name in an out-of-memory line of the kernel these stages run. */
  String kernelName() {
    return kernel.name();
  }

  @Override
  public List<HostBatch> splitHost(HostBatch host) {
    return host.halves();
  }

  @Override
  public List<DeviceBatch> splitDevice(DeviceBatch device) {
    return device.halves();
  }

  @Override
  public long outputBytes(DeviceResult output) {
    return output.outputBytes();
  }

  @Override
  public long freeDeviceBytes() {
    return DeviceMemory.freeBytes();
  }
}
