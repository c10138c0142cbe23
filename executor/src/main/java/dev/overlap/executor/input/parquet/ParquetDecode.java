package dev.overlap.executor.input.parquet;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.ColumnView;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.CudfColumnSizeOverflowException;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.HostColumnVector;
import ai.rapids.cudf.HybridScanReader;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import dev.overlap.executor.compute.KernelInput;
import dev.overlap.executor.gpu.DeviceMemory;
import dev.overlap.executor.gpu.FaultedFiles;
import dev.overlap.executor.gpu.GpuHealth;
import dev.overlap.executor.input.parquet.delta.DeviceKeep;
import dev.overlap.executor.resource.Closing;
import dev.overlap.executor.resource.Resources;
import dev.overlap.executor.types.ColumnType;
import dev.overlap.executor.types.NestedTypes;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * The kernel's input from Parquet chunks: decoded with cuDF's Parquet reader on the compute
 * thread's stream, then made the kernel's declared types (a cast where the file's type is narrower,
 * nulls for a column a file lacks), the rows a Delta table's deletion vector lists dropped. A batch
 * of several row groups whose decode or kernel did not fit is split on the device ({@link
 * DeviceChunks#halves}). A file whose pages cuDF cannot decode throws {@link DecodeFailed}, and is
 * read on the host.
 */
public final class ParquetDecode implements KernelInput<DeviceChunks> {
  private final StructType schema;
  private final DType[] types;

  /**
   * @param schema the kernel's input schema
   */
  public ParquetDecode(StructType schema) {
    this.schema = schema;
    this.types = ColumnType.dtypesOf(schema);
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
            ProvokedFault.at(p.file());
            // A Delta table's deleted rows leave once decoded: the mask first, so that nothing
            // can fail between the table's making and DeviceKeep taking it.
            boolean[] keep =
                p.deleted() == null ? null : p.deleted().keep(p.rowGroups(), p.groupRows());
            parts.add(DeviceKeep.rows(arrange(decoded, p.columns(), p.rows(), p.file()), keep));
          } catch (RuntimeException e) {
            // Not the GPU's fault: the file is read on the host instead. Out of device memory and
            // fatal CUDA errors go on as they are (a retry, a split, the fence).
            if (GpuHealth.isFatal(e)) {
              // Perhaps the file's fault, perhaps not (a fatal error is the context's, whoever
              // made it): the file is read on the host from now on, which gives Spark's answer.
              FaultedFiles.faulted(
                  p.split().identity(),
                  p.split().fileName(),
                  String.valueOf(e.getMessage()).lines().findFirst().orElse("").trim());
              throw new DecodeFaulted(p.split(), e);
            }
            if (DeviceMemory.isOutOfMemory(e) || e instanceof CudfColumnSizeOverflowException) {
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

  /** A nested column of {@code rows} nulls, for a file that lacks it. */
  private static ColumnVector nulls(DataType t, long rows) {
    try (HostColumnVector.ColumnBuilder b =
        new HostColumnVector.ColumnBuilder(NestedTypes.hostType(t), rows)) {
      for (long i = 0; i < rows; i++) {
        b.appendNull();
      }
      try (HostColumnVector h = b.build()) {
        return h.copyToDevice();
      }
    }
  }

  /**
   * Strings as binary: a LIST of UINT8 over the strings' offsets and bytes, as cuDF decodes a
   * BINARY column without the UTF8 annotation. A new column; {@code s} is left as it is.
   */
  static ColumnVector bytesOf(ColumnView s) {
    if (s.getOffsets() != null && s.getOffsets().getLength() != 4L * (s.getRowCount() + 1)) {
      // Large strings' 64-bit offsets do not make a LIST's 32-bit ones.
      throw new IllegalStateException("binary column with 64-bit offsets");
    }
    long chars = s.getData() == null ? 0 : s.getData().getLength();
    try (ColumnView bytes = new ColumnView(DType.UINT8, chars, Optional.of(0L), s.getData(), null);
        ColumnView list =
            new ColumnView(
                DType.LIST,
                s.getRowCount(),
                Optional.of(s.getNullCount()),
                s.getValid(),
                s.getOffsets(),
                new ColumnView[] {bytes})) {
      return list.copyToColumnVector();
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
        if (at < 0 && ColumnType.of(schema.fields()[c].dataType()).nested()) {
          cols.add(nulls(schema.fields()[c].dataType(), rows));
        } else if (at < 0) {
          try (Scalar none = Scalar.fromNull(types[c])) {
            cols.add(ColumnVector.fromScalar(none, (int) rows));
          }
        } else {
          ColumnVector v = decoded.getColumn(at);
          DataType want = schema.fields()[c].dataType();
          if (want instanceof BinaryType && v.getType().equals(DType.STRING)) {
            cols.add(bytesOf(v));
            continue;
          }
          if (ColumnType.of(want).nested()) {
            // FileColumns admitted the layout; what came out is checked all the same.
            String why = NestedTypes.mismatch(want, NestedTypes.of(v), schema.fields()[c].name());
            if (why != null) {
              throw new IllegalStateException(file + ": decoded " + why);
            }
          }
          cols.add(v.getType().equals(types[c]) ? v.incRefCount() : v.castTo(types[c]));
        }
      }
      return new Table(cols.toArray(new ColumnVector[0]));
    } finally {
      Closing.all(cols);
    }
  }
}
