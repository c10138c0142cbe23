package dev.overlap.executor.input.rapids;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostMemoryBuffer;
import ai.rapids.cudf.Table;
import dev.overlap.executor.compute.KernelInput;
import dev.overlap.executor.pipeline.BatchSource;
import dev.overlap.executor.pipeline.PackedBatch;
import dev.overlap.executor.pipeline.Upload;
import dev.overlap.executor.resource.Closing;
import dev.overlap.executor.resource.Resources;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Input that is already in device memory: cuDF tables another plugin made on the task's thread (the
 * RAPIDS Accelerator's {@code ColumnarRdd}). They skip packing and the upload: the source casts a
 * table's columns to the kernel's input types where they differ, waits for the task thread's work
 * on it, and hands it to the pipeline, whose compute stage runs the kernel on it.
 */
public final class DeviceTables {
  private DeviceTables() {}

  /** A table on the device, owned by this batch until handed on ({@link #take}). */
  public static final class Batch implements PackedBatch {
    private Table table;
    private final int rows;
    private final long bytes;

    Batch(Table table) {
      this.table = table;
      this.rows = table == null ? 0 : (int) table.getRowCount();
      this.bytes = table == null ? 0 : table.getDeviceMemorySize();
    }

    @Override
    public int rows() {
      return rows;
    }

    /** Nothing is copied. */
    @Override
    public long copyBytes() {
      return 0;
    }

    @Override
    public long deviceBytes() {
      return bytes;
    }

    /** A batch holding this one's table; this one then holds nothing. */
    synchronized Batch take() {
      Batch b = new Batch(table);
      table = null;
      return b;
    }

    synchronized Table table() {
      return table;
    }

    @Override
    public synchronized void close() {
      Table t = table;
      table = null;
      if (t != null) {
        t.close();
      }
    }
  }

  /**
   * The task's tables, in order. The staging buffer each fill is given is not needed and goes back
   * at once. Owns the tables it took from {@code tables} until they are in a batch.
   */
  public static final class Source implements BatchSource<HostMemoryBuffer, Batch> {
    private final Iterator<Table> tables;
    private final DType[] types;
    private final Runnable beforeEachTable;
    private long rowsRead;

    /**
     * @param types the kernel's input types, one per column
     * @param beforeEachTable runs on the task's thread before a table is taken (the RAPIDS
     *     Accelerator's GPU admission); may be null
     */
    public Source(Iterator<Table> tables, DType[] types, Runnable beforeEachTable) {
      this.tables = tables;
      this.types = types;
      this.beforeEachTable = beforeEachTable;
    }

    @Override
    public Batch fill(HostMemoryBuffer staging, Runnable release) {
      release.run();
      if (beforeEachTable != null) {
        beforeEachTable.run();
      }
      while (tables.hasNext()) {
        Table in = tables.next();
        if (in.getRowCount() == 0) {
          // A batch of no rows would end the task's input: skip it.
          in.close();
          continue;
        }
        Table t = castTo(in, types);
        try {
          // The task's thread made (and cast) the table; the compute thread reads it.
          Cuda.DEFAULT_STREAM.sync();
        } catch (RuntimeException e) {
          throw Closing.after(e, List.of(t));
        } catch (Error e) {
          throw Closing.after(e, List.of(t));
        }
        rowsRead += t.getRowCount();
        return new Batch(t);
      }
      return new Batch(null);
    }

    @Override
    public boolean more() {
      return tables.hasNext();
    }

    @Override
    public long rowsRead() {
      return rowsRead;
    }

    /** A fill waits for the other plugin's operators to make the table: no packing. */
    @Override
    public boolean packsOnHost() {
      return false;
    }
  }

  /**
   * {@code in} with each column of a type other than {@code types}' cast to it; {@code in} itself
   * when none differs. Takes ownership of {@code in} (closed when a new table is made).
   *
   * @throws IllegalArgumentException naming the column count when it differs
   */
  static Table castTo(Table in, DType[] types) {
    Table out = Resources.closeOnExcept(in, t -> cast(t, types));
    if (out == in) {
      return out;
    }
    return Resources.closeOnExcept(
        out,
        o -> {
          in.close();
          return o;
        });
  }

  /** A new table of {@code in}'s columns as {@code types}, or {@code in} when none differs. */
  private static Table cast(Table in, DType[] types) {
    if (in.getNumberOfColumns() != types.length) {
      throw new IllegalArgumentException(
          "the device batch has "
              + in.getNumberOfColumns()
              + " columns, the kernel's input "
              + types.length);
    }
    boolean same = true;
    for (int i = 0; i < types.length; i++) {
      same &= in.getColumn(i).getType().equals(types[i]);
    }
    if (same) {
      return in;
    }
    List<ColumnVector> cols = new ArrayList<>();
    try {
      for (int i = 0; i < types.length; i++) {
        ColumnVector c = in.getColumn(i);
        cols.add(c.getType().equals(types[i]) ? c.incRefCount() : c.castTo(types[i]));
      }
      return new Table(cols.toArray(new ColumnVector[0]));
    } finally {
      Closing.all(cols); // the table holds its own references
    }
  }

  /** The upload of a device table: none, the batch hands its table on. */
  public static Upload<Batch, Batch> upload() {
    return Batch::take;
  }

  /**
   * The kernel's input from a device table: the kernel's own references to its columns, kept until
   * its work is done (the pipeline closes the batch after the compute stage).
   */
  public static KernelInput<Batch> kernelInput() {
    return device -> {
      Table t = device.table();
      ColumnVector[] cols = new ColumnVector[t.getNumberOfColumns()];
      for (int i = 0; i < cols.length; i++) {
        cols[i] = t.getColumn(i);
      }
      Table keep = new Table(cols);
      return new KernelInput.Kept(keep, keep);
    };
  }
}
