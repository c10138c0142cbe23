package dev.overlap.executor.input.rows;

import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostColumnVector;
import ai.rapids.cudf.HostColumnVectorCore;
import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.resource.Closing;
import dev.overlap.executor.types.ColumnType;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.unsafe.Platform;

/**
 * One batch's column of arrays of a fixed-width primitive ({@code array<float>}, an embedding,
 * say), built straight into cuDF's LIST layout: the offsets, the elements' values and their
 * validity. From Spark's column vectors, a range's elements go over with one array copy when they
 * lie together in the child vector (how Spark's Parquet reader fills it); from rows, an array at a
 * time. Owns its buffers until {@link #build}, or {@link #close} when the batch is dropped.
 */
final class PrimitiveLists implements AutoCloseable {
  private final ColumnType element;
  private final DType elementType;
  private final int width;
  private HostMemoryBuffer offsets;
  private HostMemoryBuffer data;
  private HostMemoryBuffer listValid; // null until a list is null
  private HostMemoryBuffer elementValid; // null until an element is null
  private int rows;
  private int elements;
  private long nullLists;
  private long nullElements;

  /** Whether {@code t} is an array of a type this builds: fixed width, not a decimal. */
  static boolean takes(DataType t) {
    if (!(t instanceof ArrayType a)) {
      return false;
    }
    ColumnType e = ColumnType.of(a.elementType());
    return e != null
        && e.width() > 0
        && !e.nested()
        && !(a.elementType() instanceof org.apache.spark.sql.types.DecimalType);
  }

  PrimitiveLists(ArrayType type, int rowsHint, int elementsHint) {
    this.element = ColumnType.of(type.elementType());
    this.elementType = element.dtype(type.elementType());
    this.width = element.width();
    this.offsets = HostMemoryBuffer.allocate(4L * (rowsHint + 1), false);
    try {
      this.data = HostMemoryBuffer.allocate((long) Math.max(1, elementsHint) * width, false);
    } catch (RuntimeException | Error e) {
      offsets.close();
      throw e;
    }
    offsets.setInt(0, 0);
  }

  /** Bytes on the device so far: offsets and values (validity aside, an eighth of that). */
  long bytes() {
    return 4L * (rows + 1) + (long) elements * width;
  }

  /** Bytes that {@code n} more rows of {@code v} from {@code start} would add. */
  static long bytesOf(ColumnVector v, int start, int n, int width) {
    WritableColumnVector w = (WritableColumnVector) v;
    long total = 4L * n;
    for (int i = start; i < start + n; i++) {
      if (!v.isNullAt(i)) {
        total += (long) w.getArrayLength(i) * width;
      }
    }
    return total;
  }

  int width() {
    return width;
  }

  /** Appends value {@code i} of {@code src}, an array or null. */
  void append(SpecializedGetters src, int i) {
    if (src.isNullAt(i)) {
      appendNull();
    } else {
      append(src.getArray(i));
    }
  }

  /** Appends array {@code a}, not null: a row's or a run of a column vector's child. */
  private void append(ArrayData a) {
    int n = a.numElements();
    reserve(1, n);
    long dst = data.getAddress() + (long) elements * width;
    for (int k = 0; k < n; k++) {
      if (a.isNullAt(k)) {
        setElementNull(elements + k);
      } else {
        put(a, k, dst + (long) k * width);
      }
    }
    endList(n);
  }

  /**
   * Appends rows {@code [start, start + n)} of Spark's column vector {@code v}: the elements in one
   * array copy when they lie together, else array by array.
   */
  void appendRange(ColumnVector v, int start, int n) {
    WritableColumnVector w = (WritableColumnVector) v;
    ColumnVector child = w.getChild(0);
    int first = -1;
    int count = 0;
    boolean together = true;
    for (int i = start; i < start + n && together; i++) {
      if (v.isNullAt(i)) {
        continue;
      }
      int off = w.getArrayOffset(i);
      if (first < 0) {
        first = off;
      }
      together = off == first + count;
      count += w.getArrayLength(i);
    }
    if (!together || first < 0 || child.hasNull()) {
      for (int i = start; i < start + n; i++) {
        if (v.isNullAt(i)) {
          appendNull();
        } else {
          append(w.getArray(i));
        }
      }
      return;
    }
    reserve(n, count);
    long dst = data.getAddress() + (long) elements * width;
    if (!element.copy(child, first, count, dst)) {
      ArrayData run = new ColumnarArray(child, first, count);
      for (int k = 0; k < count; k++) {
        put(run, k, dst + (long) k * width);
      }
    }
    int at = elements;
    for (int i = start; i < start + n; i++) {
      if (v.isNullAt(i)) {
        setListNull(rows);
      } else {
        at += w.getArrayLength(i);
      }
      rows++;
      offsets.setInt(4L * rows, at);
    }
    elements = at;
  }

  private void appendNull() {
    reserve(1, 0);
    setListNull(rows);
    endList(0);
  }

  private void endList(int n) {
    elements += n;
    rows++;
    offsets.setInt(4L * rows, elements);
  }

  /** Value {@code k} of array {@code a}, not null, at {@code dst}. */
  private void put(SpecializedGetters a, int k, long dst) {
    switch (element) {
      case BOOLEAN -> Platform.putByte(null, dst, a.getBoolean(k) ? (byte) 1 : 0);
      case BYTE -> Platform.putByte(null, dst, a.getByte(k));
      case SHORT -> Platform.putShort(null, dst, a.getShort(k));
      case INT, DATE -> Platform.putInt(null, dst, a.getInt(k));
      case LONG, TIMESTAMP, TIMESTAMP_NTZ -> Platform.putLong(null, dst, a.getLong(k));
      case FLOAT -> Platform.putFloat(null, dst, a.getFloat(k));
      case DOUBLE -> Platform.putDouble(null, dst, a.getDouble(k));
      default -> throw new IllegalStateException("not a primitive element: " + element);
    }
  }

  /** Room for {@code moreRows} lists and {@code moreElements} elements. */
  private void reserve(int moreRows, int moreElements) {
    offsets = grown(offsets, 4L * (rows + moreRows + 1), 4L * (rows + 1));
    data = grown(data, (long) (elements + moreElements) * width, (long) elements * width);
    if (listValid != null) {
      listValid = grownMask(listValid, rows + moreRows, rows);
    }
    if (elementValid != null) {
      elementValid = grownMask(elementValid, elements + moreElements, elements);
    }
  }

  private void setListNull(int row) {
    if (listValid == null) {
      listValid = allValid(Math.max(rows + 1, (int) (offsets.getLength() / 4)));
    }
    clear(listValid, row);
    nullLists++;
  }

  private void setElementNull(int at) {
    if (elementValid == null) {
      elementValid = allValid((int) Math.max(at + 1, data.getLength() / width));
    }
    elementValid = grownMask(elementValid, at + 1, elements);
    clear(elementValid, at);
    nullElements++;
  }

  private static void clear(HostMemoryBuffer mask, int i) {
    long b = i >>> 3;
    mask.setByte(b, (byte) (mask.getByte(b) & ~(1 << (i & 7))));
  }

  /** A mask of at least {@code bits} bits, all valid. */
  private static HostMemoryBuffer allValid(int bits) {
    long len = BatchLayout.validityBytes(Math.max(bits, 1));
    HostMemoryBuffer m = HostMemoryBuffer.allocate(len, false);
    m.setMemory(0, len, (byte) 0xFF);
    return m;
  }

  private static HostMemoryBuffer grownMask(HostMemoryBuffer m, long bits, long usedBits) {
    long need = BatchLayout.validityBytes(Math.max(bits, 1));
    if (need <= m.getLength()) {
      return m;
    }
    HostMemoryBuffer g = grown(m, need, (usedBits + 7) / 8);
    g.setMemory((usedBits + 7) / 8, g.getLength() - (usedBits + 7) / 8, (byte) 0xFF);
    if (usedBits % 8 != 0) {
      long last = usedBits / 8;
      g.setByte(last, (byte) (g.getByte(last) | (0xFF << (usedBits % 8))));
    }
    return g;
  }

  /** {@code b}, or a buffer twice as large holding its first {@code used} bytes. */
  private static HostMemoryBuffer grown(HostMemoryBuffer b, long need, long used) {
    if (need <= b.getLength()) {
      return b;
    }
    HostMemoryBuffer g = HostMemoryBuffer.allocate(Math.max(need, 2 * b.getLength()), false);
    g.copyFromHostBuffer(0, b, 0, used);
    b.close();
    return g;
  }

  /** The LIST column; its buffers move into it, and this builder holds nothing after. */
  HostColumnVector build() {
    HostColumnVectorCore child =
        new HostColumnVectorCore(
            elementType,
            elements,
            Optional.of(nullElements),
            data,
            nullElements > 0 ? elementValid : null,
            null,
            new ArrayList<>());
    List<HostColumnVectorCore> kids = new ArrayList<>();
    kids.add(child);
    HostColumnVector out =
        new HostColumnVector(
            DType.LIST,
            rows,
            Optional.of(nullLists),
            null,
            nullLists > 0 ? listValid : null,
            offsets,
            kids);
    if (nullElements == 0 && elementValid != null) {
      elementValid.close();
    }
    if (nullLists == 0 && listValid != null) {
      listValid.close();
    }
    data = offsets = listValid = elementValid = null;
    return out;
  }

  @Override
  public void close() {
    List<HostMemoryBuffer> held = new ArrayList<>();
    for (HostMemoryBuffer b : new HostMemoryBuffer[] {offsets, data, listValid, elementValid}) {
      if (b != null) {
        held.add(b);
      }
    }
    data = offsets = listValid = elementValid = null;
    Closing.all(held);
  }
}
