package dev.overlap.executor.input.rows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostColumnVector;
import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.output.rows.HostTable;
import dev.overlap.executor.testing.NestedData;
import dev.overlap.executor.types.ColumnType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Arrays, structs, maps and binary, nulls at every level, three levels deep: packed from rows
 * (Spark's generic and unsafe rows) and from Spark's columnar vectors into cuDF host columns, and
 * read back as Spark reads them; compared byte for byte with Spark's own values (their unsafe
 * rows). On the host only: runs without a GPU.
 */
class NestedPackingTest {
  private static final StructType SCHEMA = NestedData.SCHEMA;
  private final List<HostMemoryBuffer> buffers = new ArrayList<>();
  private final AtomicInteger released = new AtomicInteger();
  private final UnsafeProjection toUnsafe = UnsafeProjection.create(SCHEMA);

  @AfterEach
  void closeBuffers() {
    buffers.forEach(HostMemoryBuffer::close);
  }

  private HostBatchWriter writer(long bufferBytes) {
    ColumnType[] types = ColumnType.forSchema(SCHEMA, "test");
    BatchLayout layout = new BatchLayout(types, bufferBytes, 100_000, 32);
    HostBatchWriter w = new HostBatchWriter(SCHEMA, layout);
    HostMemoryBuffer b = HostMemoryBuffer.allocate(layout.totalBytes, false);
    buffers.add(b);
    w.begin(b, released::incrementAndGet);
    return w;
  }

  /** Spark's internal row of NestedData's row {@code i}, as its own converters make it. */
  static InternalRow internal(long i) {
    return (InternalRow)
        CatalystTypeConverters.createToCatalystConverter(SCHEMA).apply(NestedData.row(i));
  }

  /** The rows read back from {@code batch}, each copied to Spark's unsafe format. */
  private List<UnsafeRow> readBack(HostBatch batch) {
    List<UnsafeRow> out = new ArrayList<>();
    try (HostTable t = new HostTable(SCHEMA, batch.toHostColumns(), "test")) {
      Iterator<InternalRow> it = t.rows();
      while (it.hasNext()) {
        out.add(toUnsafe.apply(it.next()).copy());
      }
    }
    return out;
  }

  private void assertSameRows(List<Long> ids, List<UnsafeRow> actual) {
    assertEquals(ids.size(), actual.size());
    for (int k = 0; k < ids.size(); k++) {
      UnsafeRow want = toUnsafe.apply(internal(ids.get(k))).copy();
      assertEquals(
          want,
          actual.get(k),
          () -> "row " + ids + ": " + NestedData.row(ids.get(0)) + " read back differently");
    }
  }

  @Test
  void genericAndUnsafeRowsRoundTripWithNullsAtEveryLevel() {
    for (boolean unsafe : new boolean[] {false, true}) {
      HostBatchWriter w = writer(1 << 20);
      List<Long> ids = new ArrayList<>();
      for (long i = 0; i < 700; i++) {
        InternalRow row = internal(i);
        assertTrue(w.append(unsafe ? toUnsafe.apply(row) : row));
        ids.add(i);
      }
      try (HostBatch batch = w.finish()) {
        assertEquals(700, batch.rows());
        assertEquals(DType.LIST, batch.dtype(1));
        assertEquals(DType.STRUCT, batch.dtype(3));
        // Every nested column is counted in what goes to the device.
        assertTrue(batch.copyBytes() > 700L * (8 + 3 * 4), String.valueOf(batch.copyBytes()));
        assertTrue(batch.deviceBytes() >= batch.copyBytes());
        assertTrue(batch.halves().isEmpty(), "a batch with nested columns is not cut on the host");
        assertSameRows(ids, readBack(batch));
      }
    }
    assertEquals(2, released.get());
  }

  @Test
  void theThreeKindsOfEmptyStayApart() {
    HostBatchWriter w = writer(1 << 20);
    for (long i = 0; i < 3; i++) {
      assertTrue(w.append(internal(i)));
    }
    try (HostBatch batch = w.finish();
        HostColumnVector tags = batch.toHostColumns()[1]) {
      // Row 0: a null list; row 1: an empty list; row 2: a list holding a null.
      assertTrue(tags.isNull(0));
      assertFalse(tags.isNull(1));
      assertEquals(0, tags.getEndListOffset(1) - tags.getStartListOffset(1));
      assertEquals(3, tags.getEndListOffset(2) - tags.getStartListOffset(2));
      assertTrue(tags.getChildColumnView(0).isNull(tags.getStartListOffset(2) + 1));
    }
  }

  @Test
  void sparksColumnarVectorsRoundTrip() {
    int n = 500;
    ColumnarBatch input = columnar(0, n);
    try {
      HostBatchWriter w = writer(1 << 20);
      // Two ranges, as a scan hands over several batches.
      assertEquals(200, w.appendColumns(input, 0, 200));
      assertEquals(300, w.appendColumns(input, 200, 300));
      List<Long> ids = new ArrayList<>();
      for (long i = 0; i < n; i++) {
        ids.add(i);
      }
      try (HostBatch batch = w.finish()) {
        assertSameRows(ids, readBack(batch));
      }
    } finally {
      input.close();
    }
  }

  @Test
  void aBatchOfNestedColumnsEndsWhenTheyHoldTheStagingBuffersSize() {
    long size = 64 << 10;
    List<UnsafeRow> all = new ArrayList<>();
    List<Long> ids = new ArrayList<>();
    int batches = 0;
    long i = 0;
    while (i < 3000) {
      HostBatchWriter w = writer(size);
      while (i < 3000 && w.append(internal(i))) {
        ids.add(i++);
      }
      try (HostBatch batch = w.finish()) {
        assertTrue(batch.rows() > 0);
        assertTrue(batch.copyBytes() < 2 * size, batch.copyBytes() + " bytes in one batch");
        all.addAll(readBack(batch));
        batches++;
      }
    }
    assertTrue(batches > 1, "the nested columns' bytes end a batch");
    assertSameRows(ids, all);
  }

  @Test
  void anOutputWhoseNestedChildDiffersNamesThePath() {
    StructType declared =
        new StructType().add("emb", DataTypes.createArrayType(DataTypes.LongType, false));
    HostColumnVector ints =
        HostColumnVector.fromLists(
            new HostColumnVector.ListType(true, new HostColumnVector.BasicType(false, DType.INT32)),
            List.of(1, 2));
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> new HostTable(declared, new HostColumnVector[] {ints}, "k"));
    assertTrue(e.getMessage().contains("'emb'"), e.getMessage());
    assertTrue(
        e.getMessage().contains("emb.element: INT32 on the GPU, declared bigint"), e.getMessage());
  }

  /** Embeddings and arrays of ints with null elements: the bulk path's schema. */
  private static final StructType ARRAYS =
      new StructType()
          .add("id", DataTypes.LongType, false)
          .add("emb", DataTypes.createArrayType(DataTypes.FloatType, false))
          .add("ints", DataTypes.createArrayType(DataTypes.IntegerType, true));

  private static Row arraysRow(long i) {
    java.util.List<Float> emb = new ArrayList<>();
    for (int k = 0; k < 64; k++) {
      emb.add((float) Math.sin(i + k));
    }
    java.util.List<Integer> ints =
        i % 5 == 0 ? null : i % 5 == 1 ? List.of() : java.util.Arrays.asList((int) i, null, 7);
    return org.apache.spark.sql.RowFactory.create(i, i % 9 == 0 ? null : emb, ints);
  }

  @Test
  void arraysOfPrimitivesPackInBulkFromSparksVectorsAndRowByRowFromRows() {
    UnsafeProjection unsafe = UnsafeProjection.create(ARRAYS);
    var toInternal = CatalystTypeConverters.createToCatalystConverter(ARRAYS);
    int n = 3000;
    ColumnVector[] vectors = new ColumnVector[3];
    for (int c = 0; c < 3; c++) {
      vectors[c] = new OnHeapColumnVector(n, ARRAYS.fields()[c].dataType());
    }
    List<UnsafeRow> want = new ArrayList<>();
    for (long i = 0; i < n; i++) {
      Row r = arraysRow(i);
      for (int c = 0; c < 3; c++) {
        put((WritableColumnVector) vectors[c], ARRAYS.fields()[c].dataType(), r.get(c));
      }
      want.add(unsafe.apply((InternalRow) toInternal.apply(r)).copy());
    }
    ColumnarBatch input = new ColumnarBatch(vectors);
    input.setNumRows(n);
    ColumnType[] types = ColumnType.forSchema(ARRAYS, "test");
    // A small staging buffer: the lists' bytes end several batches.
    BatchLayout layout = new BatchLayout(types, 256 << 10, 100_000, 32);
    for (boolean fromRows : new boolean[] {false, true}) {
      List<UnsafeRow> got = new ArrayList<>();
      int batches = 0;
      int at = 0;
      while (at < n) {
        HostBatchWriter w = new HostBatchWriter(ARRAYS, layout);
        HostMemoryBuffer b = HostMemoryBuffer.allocate(layout.totalBytes, false);
        buffers.add(b);
        w.begin(b, released::incrementAndGet);
        if (fromRows) {
          while (at < n && w.append(unsafe.apply((InternalRow) toInternal.apply(arraysRow(at))))) {
            at++;
          }
        } else {
          at += w.appendColumns(input, at, n - at);
        }
        try (HostBatch batch = w.finish();
            HostTable t = new HostTable(ARRAYS, batch.toHostColumns(), "test")) {
          assertTrue(batch.rows() > 0);
          Iterator<InternalRow> it = t.rows();
          while (it.hasNext()) {
            got.add(unsafe.apply(it.next()).copy());
          }
        }
        batches++;
      }
      assertTrue(batches > 2, "batches: " + batches);
      assertEquals(want.size(), got.size());
      for (int i = 0; i < n; i++) {
        assertEquals(want.get(i), got.get(i), (fromRows ? "rows" : "vectors") + ", row " + i);
      }
    }
    input.close();
  }

  /** NestedData's rows {@code [from, from + n)} as Spark's on-heap column vectors. */
  static ColumnarBatch columnar(long from, int n) {
    ColumnVector[] vectors = new ColumnVector[SCHEMA.fields().length];
    for (int c = 0; c < vectors.length; c++) {
      vectors[c] = new OnHeapColumnVector(n, SCHEMA.fields()[c].dataType());
    }
    for (long i = from; i < from + n; i++) {
      Row r = NestedData.row(i);
      for (int c = 0; c < vectors.length; c++) {
        put((WritableColumnVector) vectors[c], SCHEMA.fields()[c].dataType(), r.get(c));
      }
    }
    ColumnarBatch b = new ColumnarBatch(vectors);
    b.setNumRows(n);
    return b;
  }

  /**
   * Appends external value {@code o} of type {@code t} to {@code v}, as Spark's reader fills it.
   */
  private static void put(WritableColumnVector v, DataType t, Object o) {
    if (o == null) {
      if (t instanceof StructType) {
        v.appendStruct(true);
      } else {
        v.appendNull();
      }
      return;
    }
    if (t instanceof ArrayType a) {
      List<?> values = (List<?>) o;
      v.appendArray(values.size());
      for (Object e : values) {
        put(v.arrayData(), a.elementType(), e);
      }
    } else if (t instanceof MapType m) {
      Map<?, ?> map = (Map<?, ?>) o;
      v.appendArray(map.size());
      for (Map.Entry<?, ?> e : map.entrySet()) {
        put(v.getChild(0), m.keyType(), e.getKey());
        put(v.getChild(1), m.valueType(), e.getValue());
      }
    } else if (t instanceof StructType s) {
      v.appendStruct(false);
      Row r = (Row) o;
      for (int f = 0; f < s.fields().length; f++) {
        put(v.getChild(f), s.fields()[f].dataType(), r.get(f));
      }
    } else if (t instanceof BinaryType) {
      byte[] b = (byte[]) o;
      v.appendByteArray(b, 0, b.length);
    } else if (t instanceof StringType) {
      byte[] b = ((String) o).getBytes(StandardCharsets.UTF_8);
      v.appendByteArray(b, 0, b.length);
    } else if (t instanceof LongType) {
      v.appendLong((Long) o);
    } else if (t instanceof IntegerType) {
      v.appendInt((Integer) o);
    } else if (t instanceof FloatType) {
      v.appendFloat((Float) o);
    } else {
      throw new IllegalArgumentException(t.simpleString());
    }
  }
}
