package dev.overlap.executor.input.rows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.HostColumnVector;
import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.output.rows.HostTable;
import dev.overlap.executor.resource.BatchTracker;
import dev.overlap.executor.resource.TaskTag;
import dev.overlap.executor.testing.TestData;
import dev.overlap.executor.types.ColumnType;
import dev.overlap.executor.types.UnsupportedColumnException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Packing into cuDF's host layout and reading it back, on the host only: runs without a GPU. The
 * round trip goes rows -> staging buffer -> cuDF HostColumnVector -> Spark rows.
 */
class HostBatchWriterTest {
  /** Every supported type, with nulls in every column: the rows Spark-level tests use too. */
  static final StructType ALL_TYPES = TestData.SCHEMA;

  private final List<HostMemoryBuffer> buffers = new ArrayList<>();
  private final AtomicInteger released = new AtomicInteger();

  static StructField field(String name, DataType t) {
    return new StructField(name, t, true, org.apache.spark.sql.types.Metadata.empty());
  }

  private HostMemoryBuffer buffer(long size) {
    HostMemoryBuffer b = HostMemoryBuffer.allocate(size, false);
    buffers.add(b);
    return b;
  }

  @AfterEach
  void closeBuffers() {
    buffers.forEach(HostMemoryBuffer::close);
  }

  private List<Object[]> readBack(HostBatch batch) {
    HostColumnVector[] cols = batch.toHostColumns();
    List<Object[]> out = new ArrayList<>();
    try (HostTable t = new HostTable(ALL_TYPES, cols, "test")) {
      Iterator<InternalRow> it = t.rows();
      while (it.hasNext()) {
        InternalRow r = it.next();
        Object[] v = new Object[ALL_TYPES.fields().length];
        for (int c = 0; c < v.length; c++) {
          DataType dt = ALL_TYPES.fields()[c].dataType();
          v[c] = r.isNullAt(c) ? null : r.get(c, dt);
          if (v[c] instanceof UTF8String s) {
            v[c] = s.clone(); // the row reads the buffer in place
          }
        }
        out.add(v);
      }
    }
    return out;
  }

  private static void assertRowsEqual(List<Object[]> expected, List<Object[]> actual) {
    assertEquals(expected.size(), actual.size());
    for (int i = 0; i < expected.size(); i++) {
      for (int c = 0; c < expected.get(i).length; c++) {
        assertEquals(
            expected.get(i)[c],
            actual.get(i)[c],
            "row " + i + " column " + ALL_TYPES.fields()[c].name());
      }
    }
  }

  /** Rows {@code [from, to)} of TestData, packed into one batch. */
  private HostBatch packed(int from, int to, List<Object[]> expected) {
    BatchLayout layout = new BatchLayout(types(), 1 << 20, 1000, 32);
    HostBatchWriter w = new HostBatchWriter(ALL_TYPES, layout);
    w.begin(buffer(layout.totalBytes), released::incrementAndGet);
    for (int i = from; i < to; i++) {
      Object[] v = TestData.internalValues(i);
      assertTrue(w.append(new GenericInternalRow(v)));
      expected.add(v);
    }
    return w.finish();
  }

  /** Cuts {@code b} in halves down to {@code depth} and collects the parts in row order. */
  private static void cut(HostBatch b, int depth, List<HostBatch> parts) {
    List<HostBatch> halves = depth == 0 ? List.of() : b.halves();
    if (halves.isEmpty()) {
      parts.add(b.retain());
    } else {
      assertEquals(b.rows(), halves.get(0).rows() + halves.get(1).rows());
      assertEquals(0, halves.get(0).rows() % 8, "a part's mask starts on a byte");
      halves.forEach(h -> cut(h, depth - 1, parts));
      halves.forEach(HostBatch::close);
    }
  }

  @Test
  void aBatchCutIntoPartsReadsBackEveryRowInOrderAndGivesItsBufferBackOnce() {
    List<Object[]> expected = new ArrayList<>();
    List<HostBatch> parts = new ArrayList<>();
    try (HostBatch whole = packed(0, 301, expected)) {
      cut(whole, 4, parts);
    }
    assertEquals(16, parts.size());
    assertEquals(0, released.get(), "the parts hold the staging buffer");
    List<Object[]> read = new ArrayList<>();
    long nullsOfB = 0;
    for (HostBatch p : parts) {
      List<Object[]> rows = readBack(p);
      for (int c = 0; c < ALL_TYPES.fields().length; c++) {
        int col = c;
        assertEquals(rows.stream().filter(v -> v[col] == null).count(), p.nullCount(c));
      }
      read.addAll(rows);
      nullsOfB += p.nullCount(TestData.col("b"));
      assertTrue(p.deviceBytes() > 0 && p.copyBytes() > 0);
    }
    assertRowsEqual(expected, read);
    int b = TestData.col("b");
    assertEquals(
        expected.stream().filter(v -> v[b] == null).count(),
        nullsOfB,
        "null counts of the parts add up");
    for (HostBatch p : parts) {
      assertEquals(0, released.get());
      p.close();
    }
    assertEquals(1, released.get());
  }

  @Test
  void aBatchOfEightRowsCannotBeCut() {
    try (HostBatch b = packed(0, 8, new ArrayList<>())) {
      assertEquals(List.of(), b.halves());
    }
    try (HostBatch b = packed(0, 9, new ArrayList<>())) {
      List<HostBatch> h = b.halves();
      assertEquals(List.of(8, 1), h.stream().map(HostBatch::rows).toList());
      h.forEach(HostBatch::close);
    }
    assertEquals(2, released.get());
  }

  @Test
  void rowsOfEveryTypeWithNullsRoundTrip() {
    rowsRoundTrip(false);
  }

  /** Spark's own row format (what a scan or a projection hands over), read without objects. */
  @Test
  void unsafeRowsOfEveryTypeWithNullsRoundTrip() {
    rowsRoundTrip(true);
  }

  private void rowsRoundTrip(boolean unsafe) {
    BatchLayout layout = new BatchLayout(types(), 1 << 20, 1000, 32);
    HostBatchWriter w = new HostBatchWriter(ALL_TYPES, layout);
    w.begin(buffer(layout.totalBytes), released::incrementAndGet);
    List<Object[]> expected = new ArrayList<>();
    var toUnsafe = org.apache.spark.sql.catalyst.expressions.UnsafeProjection.create(ALL_TYPES);
    for (int i = 0; i < 300; i++) {
      Object[] v = TestData.internalValues(i);
      InternalRow row = new GenericInternalRow(v);
      if (unsafe) {
        row = toUnsafe.apply(row);
        assertTrue(row instanceof org.apache.spark.sql.catalyst.expressions.UnsafeRow);
      }
      assertTrue(w.append(row));
      expected.add(v);
    }
    try (HostBatch batch = w.finish()) {
      assertEquals(300, batch.rows());
      assertEquals(300 / 7, batch.nullCount(TestData.col("b"))); // rows 6, 13, 20, ... of "b"
      assertRowsEqual(expected, readBack(batch));
    }
    assertEquals(1, released.get(), "closing the batch gives the staging buffer back");
  }

  /** Where the test's leak is: the report must name this method. */
  private static HostBatch uploadThatNeverLetsGo(HostBatch b) {
    return b.retain();
  }

  @Test
  void debugModeReportsAHostBatchStillHeldAtItsTasksEndWithWhereItWasRetained() {
    List<String> report = new ArrayList<>();
    TaskTag task = TaskTag.named("packing task");
    BatchTracker.start(report::add);
    try {
      BatchLayout layout = new BatchLayout(types(), 1 << 20, 1000, 32);
      HostBatchWriter w = new HostBatchWriter(ALL_TYPES, layout);
      w.begin(buffer(layout.totalBytes), released::incrementAndGet);
      assertTrue(w.append(new GenericInternalRow(TestData.internalValues(0))));
      TaskTag before = BatchTracker.enter(task);
      HostBatch batch = w.finish();
      BatchTracker.leave(before);
      uploadThatNeverLetsGo(batch);
      batch.close();
      assertEquals(1, BatchTracker.taskEnded(task));
      assertTrue(report.get(0).startsWith("packing task: HostBatch@"), report.get(0));
      assertTrue(report.get(0).contains(".uploadThatNeverLetsGo("), report.get(0));
      assertEquals(0, released.get(), "the staging buffer is still out");
      batch.close();
      assertEquals(1, released.get());
      assertEquals(0, BatchTracker.taskEnded(task));
      assertEquals(2, report.size(), report.toString());
    } finally {
      BatchTracker.stop();
    }
  }

  @Test
  void columnarBatchesPackInBulkAndRoundTrip() {
    int n = 500;
    OnHeapColumnVector[] vectors = new OnHeapColumnVector[ALL_TYPES.fields().length];
    for (int c = 0; c < vectors.length; c++) {
      vectors[c] = new OnHeapColumnVector(n, ALL_TYPES.fields()[c].dataType());
    }
    List<Object[]> expected = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Object[] v = TestData.internalValues(i);
      expected.add(v);
      for (int c = 0; c < v.length; c++) {
        OnHeapColumnVector vec = vectors[c];
        if (v[c] == null) {
          vec.putNull(i);
          continue;
        }
        switch (ColumnType.of(vec.dataType())) {
          case BOOLEAN -> vec.putBoolean(i, (Boolean) v[c]);
          case BYTE -> vec.putByte(i, (Byte) v[c]);
          case SHORT -> vec.putShort(i, (Short) v[c]);
          case INT, DATE -> vec.putInt(i, (Integer) v[c]);
          case LONG, TIMESTAMP, TIMESTAMP_NTZ -> vec.putLong(i, (Long) v[c]);
          case FLOAT -> vec.putFloat(i, (Float) v[c]);
          case DOUBLE -> vec.putDouble(i, (Double) v[c]);
          case STRING -> vec.putByteArray(i, ((UTF8String) v[c]).getBytes());
          case DECIMAL32, DECIMAL64, DECIMAL128 -> {
            Decimal d = (Decimal) v[c];
            vec.putDecimal(i, d, d.precision());
          }
        }
      }
    }
    ColumnarBatch cb = new ColumnarBatch(vectors, n);
    // A layout of 200 rows: the 500 rows arrive in three packed batches.
    BatchLayout layout = new BatchLayout(types(), 1 << 20, 200, 32);
    HostBatchWriter w = new HostBatchWriter(ALL_TYPES, layout);
    List<Object[]> actual = new ArrayList<>();
    int offset = 0;
    int batches = 0;
    while (offset < n) {
      w.begin(buffer(layout.totalBytes), released::incrementAndGet);
      offset += w.appendColumns(cb, offset, n - offset);
      try (HostBatch b = w.finish()) {
        actual.addAll(readBack(b));
      }
      batches++;
    }
    cb.close();
    assertEquals(3, batches);
    assertRowsEqual(expected, actual);
  }

  /** Strings from a dictionary: each id's bytes, as Parquet's reader hands them over. */
  private static org.apache.spark.sql.execution.vectorized.Dictionary dictionary(String... words) {
    return new org.apache.spark.sql.execution.vectorized.Dictionary() {
      @Override
      public byte[] decodeToBinary(int id) {
        return words[id].getBytes(java.nio.charset.StandardCharsets.UTF_8);
      }

      @Override
      public int decodeToInt(int id) {
        throw new UnsupportedOperationException();
      }

      @Override
      public long decodeToLong(int id) {
        throw new UnsupportedOperationException();
      }

      @Override
      public float decodeToFloat(int id) {
        throw new UnsupportedOperationException();
      }

      @Override
      public double decodeToDouble(int id) {
        throw new UnsupportedOperationException();
      }
    };
  }

  @Test
  void dictionaryEncodedStringsPackTheirOwnBatchsValues() {
    StructType schema = new StructType(new StructField[] {field("s", DataTypes.StringType)});
    BatchLayout layout = new BatchLayout(new ColumnType[] {ColumnType.STRING}, 1 << 20, 1000, 32);
    HostBatchWriter w = new HostBatchWriter(schema, layout);
    // Two source batches with the same ids but different dictionaries (as two row groups have):
    // a value decoded for the first must not be reused for the second.
    String[][] dicts = {{"AIR", "MAIL", "SHIP"}, {"TRUCK", "RAIL", "FOB"}};
    int n = 50;
    List<String> expected = new ArrayList<>();
    List<String> actual = new ArrayList<>();
    w.begin(buffer(layout.totalBytes), released::incrementAndGet);
    for (String[] words : dicts) {
      OnHeapColumnVector v = new OnHeapColumnVector(n, DataTypes.StringType);
      v.setDictionary(dictionary(words));
      var ids = v.reserveDictionaryIds(n);
      for (int i = 0; i < n; i++) {
        if (i % 9 == 4) {
          v.putNull(i);
          ids.putInt(i, 99); // a null's id may be anything
          expected.add(null);
        } else {
          ids.putInt(i, (i * 7) % words.length);
          expected.add(words[(i * 7) % words.length]);
        }
      }
      try (ColumnarBatch cb = new ColumnarBatch(new OnHeapColumnVector[] {v}, n)) {
        assertEquals(n, w.appendColumns(cb, 0, n));
      }
    }
    try (HostBatch b = w.finish();
        HostColumnVector col = b.toHostColumns()[0]) {
      for (int i = 0; i < col.getRowCount(); i++) {
        actual.add(col.isNull(i) ? null : col.getJavaString(i));
      }
    }
    assertEquals(expected, actual);
  }

  @Test
  void aBatchEndsWhenAStringColumnOutgrowsItsShare() {
    StructType schema = new StructType(new StructField[] {field("s", DataTypes.StringType)});
    BatchLayout layout = new BatchLayout(new ColumnType[] {ColumnType.STRING}, 1 << 16, 100, 4);
    HostBatchWriter w = new HostBatchWriter(schema, layout);
    w.begin(buffer(layout.totalBytes), released::incrementAndGet);
    int appended = 0;
    while (w.append(new GenericInternalRow(new Object[] {UTF8String.fromString("0123456789")}))) {
      appended++;
    }
    assertEquals(40, appended, "100 rows x 4 bytes = 400 bytes hold 40 values of 10 bytes");
    assertFalse(w.isFull());
    w.finish().close();
    w.begin(buffer(layout.totalBytes), released::incrementAndGet);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                w.append(
                    new GenericInternalRow(new Object[] {UTF8String.fromString("y".repeat(401))})));
    assertTrue(e.getMessage().contains("'s'"), e.getMessage());
    assertTrue(e.getMessage().contains("spark.overlap.batch.stringBytesPerRow"), e.getMessage());
    w.abort();
    assertEquals(2, released.get());
  }

  @Test
  void aRetainedBatchGivesItsBufferBackOnlyAfterTheLastClose() {
    BatchLayout layout = new BatchLayout(types(), 1 << 20, 10, 32);
    HostBatchWriter w = new HostBatchWriter(ALL_TYPES, layout);
    w.begin(buffer(layout.totalBytes), released::incrementAndGet);
    w.append(new GenericInternalRow(TestData.internalValues(1)));
    HostBatch b = w.finish();
    HostBatch copyRef = b.retain(); // what an upload holds while its copy runs
    b.close();
    assertEquals(0, released.get(), "released while a copy could still read it");
    copyRef.close();
    assertEquals(1, released.get());
    assertThrows(IllegalStateException.class, b::close);
    assertThrows(IllegalStateException.class, b::retain);
  }

  @Test
  void unsupportedColumnsAreNamedWithTheirType() {
    StructType schema =
        new StructType(
            new StructField[] {
              field("ok", DataTypes.IntegerType),
              field("spans", DataTypes.createArrayType(DataTypes.createDayTimeIntervalType())),
              field("raw", DataTypes.CalendarIntervalType)
            });
    UnsupportedColumnException e =
        assertThrows(UnsupportedColumnException.class, () -> ColumnType.forSchema(schema, "input"));
    assertTrue(e.getMessage().contains("'spans' (array<interval day to second>)"), e.getMessage());
    assertTrue(e.getMessage().contains("'raw' (interval)"), e.getMessage());
    assertFalse(e.getMessage().contains("'ok'"), e.getMessage());
    assertTrue(
        e.getMessage()
            .contains(
                "Supported: boolean, tinyint, smallint, int, bigint, float, double, date,"
                    + " timestamp, timestamp_ntz, string, decimal(p<=38), binary, array<T>,"
                    + " map<K,V>, struct<...>."),
        e.getMessage());
  }

  @Test
  void timestampNtzIsMicrosecondsLikeTimestamp() {
    assertEquals(ColumnType.TIMESTAMP_NTZ, ColumnType.of(DataTypes.TimestampNTZType));
    assertEquals(
        ai.rapids.cudf.DType.TIMESTAMP_MICROSECONDS,
        ColumnType.dtypeOf(DataTypes.TimestampNTZType));
    assertEquals(8, ColumnType.TIMESTAMP_NTZ.width());
    assertFalse(ColumnType.TIMESTAMP_NTZ.hasOffsets());
  }

  @Test
  void outputOfTheWrongCudfTypeNamesTheColumn() {
    StructType declared = new StructType(new StructField[] {field("n", DataTypes.LongType)});
    HostColumnVector wrong = HostColumnVector.fromInts(1, 2, 3);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> new HostTable(declared, new HostColumnVector[] {wrong}, "K"));
    assertTrue(e.getMessage().contains("'n' is INT32"), e.getMessage());
  }

  private static ColumnType[] types() {
    return ColumnType.forSchema(ALL_TYPES, "test");
  }

  @Test
  void aSourceWhoseBatchCannotBeginGivesItsStagingBufferBack() {
    BatchLayout layout = new BatchLayout(types(), 1 << 20, 1000, 32);
    RowSource rows =
        new RowSource(List.<InternalRow>of().iterator(), new HostBatchWriter(ALL_TYPES, layout));
    HostMemoryBuffer tooSmall = buffer(layout.totalBytes / 2);
    assertThrows(
        IllegalArgumentException.class, () -> rows.fill(tooSmall, released::incrementAndGet));
    assertEquals(1, released.get(), "the staging buffer went back when the batch could not begin");
    // The writer is still usable: the next batch begins.
    HostBatch next = rows.fill(buffer(layout.totalBytes), released::incrementAndGet);
    assertEquals(0, next.rows());
    next.close();
    assertEquals(2, released.get());
  }
}
