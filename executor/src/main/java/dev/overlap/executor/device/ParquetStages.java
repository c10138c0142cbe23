package dev.overlap.executor.device;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.HybridScanReader;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.pipeline.BatchStages;
import dev.overlap.executor.pipeline.Closing;
import dev.overlap.executor.rows.HostTable;
import dev.overlap.executor.scan.ChunkBatch;
import dev.overlap.executor.scan.FileColumns;
import java.util.ArrayList;
import java.util.List;

/**
 * The GPU work of a task's Parquet batches: upload copies the compressed column chunks on the copy
 * stream (one copy per batch: the chunks lie back to back in the staging buffer); compute decodes
 * them with cuDF's Parquet reader on the compute thread's stream, makes the columns the kernel's
 * declared types (a cast where the file's type is narrower, nulls for a column a file lacks), runs
 * the kernel; download is {@link CudfStages#download}.
 *
 * <p>Out of device memory ({@link DeviceMemory}): the pipeline drains and retries a failed upload,
 * decode or kernel, then splits a batch of several row groups on the device ({@link
 * DeviceChunks#halves}) or, at upload, on the host ({@link ChunkBatch#halves}, each part copying
 * the span of the buffer its chunks lie in); a single row group is the smallest batch.
 */
public final class ParquetStages
    implements BatchStages<ChunkBatch, DeviceChunks, DeviceResult, HostTable> {
  private final StreamPair streams;
  private final CudfStages kernelStages;
  private final DType[] types;
  // What the upload and compute threads last asked device memory for, for an out-of-memory line.
  private volatile long uploadAsked = -1;
  private volatile String computeStep = "decode";

  /**
   * @param types the kernel's input types, in its column order
   */
  public ParquetStages(StreamPair streams, CudfStages kernelStages, DType[] types) {
    this.streams = streams;
    this.kernelStages = kernelStages;
    this.types = types;
  }

  @Override
  public DeviceChunks upload(ChunkBatch h) {
    Cuda.Stream stream = streams.copyStream();
    List<AutoCloseable> made = new ArrayList<>();
    DeviceChunks batch;
    uploadAsked = Math.max(1, h.copyBytes());
    try {
      DeviceMemoryBuffer all = DeviceMemoryBuffer.allocate(uploadAsked, stream);
      made.add(all);
      if (h.copyBytes() > 0) {
        all.copyFromHostBufferAsync(0, h.buffer(), h.copyFrom(), h.copyBytes(), stream);
      }
      Cuda.Event copied = new Cuda.Event();
      made.add(copied);
      copied.record(stream);
      AutoCloseable readers = h.readersKeeper();
      batch = new DeviceChunks(all, copied, h.retain(), h.takePieces(), readers, h.decodeNanos());
    } catch (RuntimeException e) {
      // The copy may already be reading the staging buffer: let it finish first.
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
  public DeviceResult compute(DeviceChunks chunks) {
    chunks.awaitCopied();
    long start = System.nanoTime();
    computeStep = "Parquet decode";
    Table input = decode(chunks);
    computeStep = "kernel";
    try {
      Cuda.DEFAULT_STREAM.sync();
    } catch (RuntimeException e) {
      throw Closing.after(e, List.of(input));
    }
    chunks.decodeNanos().add(System.nanoTime() - start);
    DeviceChunks kept = chunks.retain();
    return kernelStages.runKernel(input, () -> Closing.all(List.of(input, kept)));
  }

  /** Decodes every piece and puts the columns in the kernel's order and types. */
  private Table decode(DeviceChunks chunks) {
    List<Table> parts = new ArrayList<>();
    try {
      for (ChunkBatch.Piece p : chunks.pieces()) {
        DeviceMemoryBuffer[] slices = new DeviceMemoryBuffer[p.at().length];
        List<AutoCloseable> views = new ArrayList<>();
        try {
          for (int i = 0; i < slices.length; i++) {
            slices[i] = chunks.chunks().slice(p.at()[i], p.lengths()[i]);
            views.add(slices[i]);
          }
          // A cuDF reader decodes its row groups once: materializing them again with it (a
          // retry after running out of device memory, the parts of a split batch) was seen to
          // end in an illegal memory access on the H200. A decode that runs again takes a reader
          // of its own, built from the same footer.
          boolean again = p.decoded().getAndSet(true);
          try (HybridScanReader fresh = again ? p.freshReader().get() : null;
              Table decoded =
                  (again ? fresh : p.reader()).materializeAllColumns(p.rowGroups(), slices)) {
            parts.add(arrange(decoded, p.columns(), p.rows(), p.file()));
          }
        } finally {
          Closing.all(views);
        }
      }
      if (parts.size() == 1) {
        return parts.remove(0);
      }
      return Table.concatenate(parts.toArray(new Table[0]));
    } finally {
      Closing.all(parts);
    }
  }

  /** The kernel's columns from one file's decoded columns. */
  private Table arrange(Table decoded, FileColumns columns, long rows, String file) {
    if (decoded.getRowCount() != rows) {
      throw new IllegalStateException(
          file + ": decoded " + decoded.getRowCount() + " rows, the footer says " + rows);
    }
    List<ColumnVector> cols = new ArrayList<>();
    try {
      for (int c = 0; c < types.length; c++) {
        int at = columns.decodedIndex(c);
        if (at < 0) {
          try (Scalar none = Scalar.fromNull(types[c])) {
            cols.add(ColumnVector.fromScalar(none, (int) rows));
          }
        } else {
          ColumnVector v = decoded.getColumn(at);
          cols.add(v.getType().equals(types[c]) ? v.incRefCount() : v.castTo(types[c]));
        }
      }
      return new Table(cols.toArray(new ColumnVector[0]));
    } finally {
      Closing.all(cols);
    }
  }

  @Override
  public HostTable download(DeviceResult result) {
    return kernelStages.download(result);
  }

  @Override
  public String outOfMemory(PipelineStage stage, Throwable failure) {
    String kernel = "kernel " + kernelStages.kernelName();
    return stage == PipelineStage.UPLOAD
        ? DeviceMemory.describe(kernel + "'s Parquet upload", uploadAsked, failure)
        : DeviceMemory.describe(
            computeStep.equals("kernel") ? kernel : kernel + "'s " + computeStep, -1, failure);
  }

  @Override
  public List<ChunkBatch> splitHost(ChunkBatch host) {
    return host.halves();
  }

  @Override
  public List<DeviceChunks> splitDevice(DeviceChunks device) {
    return device.halves();
  }

  @Override
  public long outputBytes(DeviceResult output) {
    return kernelStages.outputBytes(output);
  }

  @Override
  public long freeDeviceBytes() {
    return DeviceMemory.freeBytes();
  }
}
