package dev.overlap.executor.input.rows;

import ai.rapids.cudf.HostColumnVector;
import dev.overlap.executor.resource.Closing;
import dev.overlap.executor.types.NestedTypes;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The nested columns of one batch being packed, outside its staging buffer: an array of a primitive
 * through {@link PrimitiveLists} (in bulk from Spark's vectors), any other nested type or binary
 * through cuDF's host column builder ({@link NestedAppend}). Counts the bytes they hold, by which
 * {@link HostBatchWriter} ends a batch. Owns its builders until {@link #build}, or {@link #close}
 * when the batch is dropped.
 */
final class NestedBatch implements AutoCloseable {
  private final StructType schema;
  private final HostColumnVector.ColumnBuilder[] builders;
  private final PrimitiveLists[] lists;
  private final boolean anyBuilt;
  private long bytes;

  /** Whether {@code layout} has nested columns, which a batch builds with one of these. */
  static boolean any(BatchLayout layout) {
    for (int c = 0; c < layout.columns(); c++) {
      if (layout.type(c).nested()) {
        return true;
      }
    }
    return false;
  }

  /** Builders for {@code layout}'s nested columns; nothing is held when this throws. */
  NestedBatch(StructType schema, BatchLayout layout) {
    this.schema = schema;
    int n = layout.columns();
    builders = new HostColumnVector.ColumnBuilder[n];
    lists = new PrimitiveLists[n];
    boolean built = false;
    int hint = Math.min(layout.capacityRows, 4096);
    try {
      for (int c = 0; c < n; c++) {
        DataType t = schema.fields()[c].dataType();
        if (PrimitiveLists.takes(t)) {
          lists[c] = new PrimitiveLists((ArrayType) t, hint, hint * 8);
        } else if (layout.type(c).nested()) {
          builders[c] = new HostColumnVector.ColumnBuilder(NestedTypes.hostType(t), hint);
          built = true;
        }
      }
    } catch (RuntimeException | Error e) {
      close();
      throw e;
    }
    this.anyBuilt = built;
  }

  /** Whether column {@code c} is one of the nested columns. */
  boolean has(int c) {
    return builders[c] != null || lists[c] != null;
  }

  /** Bytes the nested columns hold so far, about as on the device. */
  long bytes() {
    return bytes;
  }

  /** Appends column {@code c} of {@code row}. */
  void append(int c, InternalRow row) {
    if (lists[c] != null) {
      long before = lists[c].bytes();
      lists[c].append(row, c);
      bytes += lists[c].bytes() - before;
    } else {
      bytes += NestedAppend.append(builders[c], row, c, schema.fields()[c].dataType());
    }
  }

  /**
   * Whether {@code batch}'s nested columns go over range by range: they are all arrays of
   * primitives in Spark's own vectors. Else the writer packs the batch row by row.
   */
  boolean inRanges(ColumnarBatch batch) {
    if (anyBuilt) {
      return false;
    }
    for (int c = 0; c < lists.length; c++) {
      if (lists[c] != null && !(batch.column(c) instanceof WritableColumnVector)) {
        return false;
      }
    }
    return true;
  }

  /**
   * How many of the {@code take} rows of {@code batch} from {@code start} fit in {@code room} more
   * bytes; at least one when {@code empty} (the batch has no row yet).
   */
  int fit(ColumnarBatch batch, int start, int take, long room, boolean empty) {
    int fit = 0;
    long used = 0;
    while (fit < take) {
      long row = 0;
      for (int c = 0; c < lists.length; c++) {
        if (lists[c] != null) {
          row += PrimitiveLists.bytesOf(batch.column(c), start + fit, 1, lists[c].width());
        }
      }
      if (used + row > room && (fit > 0 || !empty)) {
        break;
      }
      used += row;
      fit++;
    }
    return fit;
  }

  /** Appends rows {@code [start, start + n)} of {@code batch}'s nested column {@code c}. */
  void appendRange(int c, ColumnarBatch batch, int start, int n) {
    long before = lists[c].bytes();
    lists[c].appendRange(batch.column(c), start, n);
    bytes += lists[c].bytes() - before;
  }

  /**
   * The nested columns, null for the flat ones; their buffers move into them, and this holds
   * nothing after. When it throws, everything is closed.
   */
  HostColumnVector[] build() {
    HostColumnVector[] out = new HostColumnVector[builders.length];
    try {
      for (int c = 0; c < out.length; c++) {
        if (builders[c] != null) {
          out[c] = builders[c].build();
        } else if (lists[c] != null) {
          out[c] = lists[c].build();
        }
      }
    } catch (RuntimeException | Error e) {
      Closing.all(java.util.Arrays.stream(out).filter(java.util.Objects::nonNull).toList());
      close();
      throw e;
    }
    close(); // a built builder holds nothing; closing it is a no-op
    return out;
  }

  @Override
  public void close() {
    List<AutoCloseable> held = new ArrayList<>();
    for (int c = 0; c < builders.length; c++) {
      if (builders[c] != null) {
        held.add(builders[c]);
      }
      if (lists[c] != null) {
        held.add(lists[c]);
      }
    }
    Closing.all(held);
  }
}
