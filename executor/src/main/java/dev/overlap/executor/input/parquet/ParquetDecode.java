package dev.overlap.executor.input.parquet;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.CudfColumnSizeOverflowException;
import ai.rapids.cudf.CudfException;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.HybridScanReader;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import dev.overlap.executor.compute.KernelInput;
import dev.overlap.executor.gpu.DeviceMemory;
import dev.overlap.executor.gpu.GpuHealth;
import dev.overlap.executor.resource.Closing;
import dev.overlap.executor.resource.Resources;
import java.util.ArrayList;
import java.util.List;

/**
 * The kernel's input from Parquet chunks: decoded with cuDF's Parquet reader on the compute
 * thread's stream, then made the kernel's declared types (a cast where the file's type is narrower,
 * nulls for a column a file lacks). A batch of several row groups whose decode or kernel did not
 * fit is split on the device ({@link DeviceChunks#halves}). A file whose pages cuDF cannot decode
 * throws {@link DecodeFailed}, and is read on the host.
 */
public final class ParquetDecode implements KernelInput<DeviceChunks> {
  private final DType[] types;

  /**
   * @param types the kernel's input types, in its column order
   */
  public ParquetDecode(DType[] types) {
    this.types = types;
  }

  @Override
  public String step() {
    return "Parquet decode";
  }

  @Override
  public Kept table(DeviceChunks chunks) {
    chunks.awaitCopied();
    long start = System.nanoTime();
    Table input =
        Resources.closeOnExcept(
            decode(chunks),
            t -> {
              Cuda.DEFAULT_STREAM.sync();
              return t;
            });
    chunks.decodeNanos().add(System.nanoTime() - start);
    DeviceChunks kept = chunks.retain();
    return new Kept(input, () -> Closing.all(List.of(input, kept)));
  }

  @Override
  public List<DeviceChunks> split(DeviceChunks batch) {
    return batch.halves();
  }

  /** Decodes every piece and puts the columns in the kernel's order and types. */
  private Table decode(DeviceChunks chunks) {
    List<Table> parts = new ArrayList<>();
    try {
      for (ChunkPiece p : chunks.pieces()) {
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
          } catch (CudfException | IllegalStateException e) {
            // Not the GPU's fault: the file is read on the host instead. Out of device memory and
            // fatal CUDA errors go on as they are (a retry, a split, the fence).
            if (GpuHealth.isFatal(e)
                || DeviceMemory.isOutOfMemory(e)
                || e instanceof CudfColumnSizeOverflowException) {
              throw e;
            }
            throw new DecodeFailed(p.file(), e);
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
}
