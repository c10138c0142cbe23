package dev.overlap.executor.input.rows;

import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostColumnVector;
import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.types.ColumnType;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Packs rows or Spark columnar batches into a staging buffer in cuDF's column layout. One writer
 * serves one task: {@link #begin} a batch in a staging buffer, {@link #append} rows or {@link
 * #appendColumns} column ranges until it is full, then {@link #finish}.
 *
 * <p>Columnar input is copied column by column: fixed-width values in bulk (one array copy per
 * column and range), strings value by value. Rows are written value by value. Nested columns and
 * binary are built value by value with cuDF's host column builder ({@link NestedAppend}), outside
 * the staging buffer; a batch with them ends when they hold as many bytes as the staging buffer.
 *
 * <p>Not thread-safe; used by its task's thread only.
 *
 * <p>Rows and column vectors are packed into the same open batch: its flat columns' regions in the
 * staging buffer ({@link StagingColumns}) and its nested columns ({@link NestedBatch}).
 */
public final class HostBatchWriter {
  private final StructType schema;
  private final BatchLayout layout;
  private final DType[] dtypes;
  private final int[] precision;
  private final int[] scale;

  private HostMemoryBuffer staging;
  private Runnable release;
  private int rows;
  // The open batch's flat columns in its staging buffer.
  private StagingColumns open;
  private final FittedStrings fitted;
  private final boolean anyNested;
  // The open batch's nested columns, when the layout has any.
  private NestedBatch nested;

  public HostBatchWriter(StructType schema, BatchLayout layout) {
    this.schema = schema;
    this.layout = layout;
    int n = layout.columns();
    dtypes = new DType[n];
    fitted = new FittedStrings(n);
    precision = new int[n];
    scale = new int[n];
    for (int c = 0; c < n; c++) {
      dtypes[c] = layout.type(c).dtype(schema.fields()[c].dataType());
      if (schema.fields()[c].dataType() instanceof DecimalType d) {
        precision[c] = d.precision();
        scale[c] = d.scale();
      }
    }
    this.anyNested = NestedBatch.any(layout);
  }

  public BatchLayout layout() {
    return layout;
  }

  /**
   * Starts a batch in {@code buffer}, which must hold {@link BatchLayout#totalBytes} bytes. The
   * batch {@link #finish} returns owns the buffer and runs {@code release} when it is closed. When
   * this method throws, no batch is open and the caller still owns the buffer.
   */
  public void begin(HostMemoryBuffer buffer, Runnable release) {
    if (staging != null) {
      throw new IllegalStateException("a batch is already open");
    }
    if (buffer.getLength() < layout.totalBytes) {
      throw new IllegalArgumentException(
          "staging buffer of " + buffer.getLength() + " bytes, layout needs " + layout.totalBytes);
    }
    StagingColumns columns = new StagingColumns(layout, buffer.getAddress());
    NestedBatch built = anyNested ? new NestedBatch(schema, layout) : null;
    // Opened only once nothing can fail: when begin throws, the caller still owns the buffer.
    this.nested = built;
    this.staging = buffer;
    this.release = release;
    this.open = columns;
    this.rows = 0;
  }

  public int rows() {
    return rows;
  }

  public boolean isFull() {
    return rows >= layout.capacityRows || (nested != null && nested.bytes() >= layout.bufferBytes);
  }

  /** Hands the packed batch over; the writer is ready for the next {@link #begin}. */
  public HostBatch finish() {
    if (staging == null) {
      throw new IllegalStateException("no batch is open");
    }
    HostColumnVector[] columns;
    try {
      columns = nested == null ? new HostColumnVector[layout.columns()] : nested.build();
    } catch (RuntimeException | Error e) {
      nested = null;
      abort();
      throw e;
    }
    nested = null;
    HostBatch b =
        new HostBatch(
            layout, dtypes, staging, release, rows, open.nullCounts(), open.stringBytes(), columns);
    staging = null;
    open = null;
    release = null;
    return b;
  }

  /**
   * Gives the staging buffer back without producing a batch (the input failed mid-batch). Safe to
   * call when no batch is open.
   */
  public void abort() {
    if (staging != null) {
      Runnable r = release;
      staging = null;
      release = null;
      open = null;
      try {
        if (nested != null) {
          nested.close();
          nested = null;
        }
      } finally {
        r.run();
      }
    }
  }

  // ---- rows ------------------------------------------------------------------------------------

  /**
   * Appends one row.
   *
   * @return false when the row does not fit (the batch is full, or a string column's share of the
   *     buffer is); nothing was written and the caller starts a new batch with this row
   * @throws IllegalArgumentException when the row does not fit even an empty batch
   */
  public boolean append(InternalRow row) {
    if (isFull()) {
      return false;
    }
    for (int c = 0; c < layout.columns(); c++) {
      if (layout.type(c).hasOffsets() && !row.isNullAt(c)) {
        long len = row.getUTF8String(c).numBytes();
        if (open.stringBytes(c) + len > layout.dataCapacity[c]) {
          if (rows == 0) {
            throw tooLarge(c, len);
          }
          return false;
        }
      }
    }
    for (int c = 0; c < layout.columns(); c++) {
      writeValue(c, row, rows);
    }
    rows++;
    return true;
  }

  /** Writes column {@code c} of {@code row} as row {@code at} of the batch. */
  private void writeValue(int c, InternalRow row, int at) {
    ColumnType t = layout.type(c);
    if (t.nested()) {
      nested.append(c, row);
      return;
    }
    if (row.isNullAt(c)) {
      if (t.hasOffsets()) {
        open.putNullString(c, at);
      } else {
        open.setNull(c, at);
      }
    } else if (t.hasOffsets()) {
      open.putString(c, at, row.getUTF8String(c));
    } else {
      t.put(row, c, precision[c], scale[c], open.valueAddress(c, at));
    }
  }

  // ---- columnar --------------------------------------------------------------------------------

  /**
   * Appends rows {@code [start, start + n)} of {@code batch} for as many rows as fit.
   *
   * @return how many rows were appended; fewer than asked when the batch filled up
   */
  public int appendColumns(ColumnarBatch batch, int start, int n) {
    if (anyNested && !nested.inRanges(batch)) {
      // Nested columns end a batch by their bytes, known only once built: row by row.
      int done = 0;
      while (done < n && append(batch.getRow(start + done))) {
        done++;
      }
      return done;
    }
    int take = Math.min(n, layout.capacityRows - rows);
    if (anyNested) {
      take = nested.fit(batch, start, take, layout.bufferBytes - nested.bytes(), rows == 0);
    }
    for (int c = 0; c < layout.columns(); c++) {
      if (layout.type(c).hasOffsets()) {
        take = fitStrings(c, batch.column(c), start, take);
      }
    }
    if (take == 0) {
      return 0;
    }
    for (int c = 0; c < layout.columns(); c++) {
      if (anyNested && nested.has(c)) {
        nested.appendRange(c, batch, start, take);
      } else if (layout.type(c).hasOffsets()) {
        copyStrings(c, take);
      } else if (!copyBulk(c, batch.column(c), start, take)) {
        for (int i = 0; i < take; i++) {
          writeValue(c, batch.getRow(start + i), rows + i);
        }
      }
    }
    rows += take;
    return take;
  }

  /**
   * Reads up to {@code take} values of string column {@code c} into {@link #fitted}, stopping at
   * the first that does not fit the column's share of the buffer.
   *
   * @return how many fit
   */
  private int fitStrings(int c, ColumnVector v, int start, int take) {
    int fit = fitted.fit(c, v, start, take, layout.dataCapacity[c] - open.stringBytes(c));
    if (fit == 0 && rows == 0 && fitted.refusedBytes() >= 0) {
      throw tooLarge(c, fitted.refusedBytes());
    }
    return fit;
  }

  /** Writes the first {@code take} values {@link #fitStrings} read for column {@code c}. */
  private void copyStrings(int c, int take) {
    for (int i = 0; i < take; i++) {
      UTF8String s = fitted.take(c, i);
      if (s == null) {
        open.putNullString(c, rows + i);
      } else {
        open.putString(c, rows + i, s);
      }
    }
  }

  /**
   * Copies a fixed-width column range with one array copy, and its nulls.
   *
   * @return false when the column must go value by value instead (see {@link ColumnType#copy})
   */
  private boolean copyBulk(int c, ColumnVector v, int start, int n) {
    if (!layout.type(c).copy(v, start, n, open.valueAddress(c, rows))) {
      return false;
    }
    if (v.hasNull()) {
      for (int i = 0; i < n; i++) {
        if (v.isNullAt(start + i)) {
          open.setNull(c, rows + i);
        }
      }
    }
    return true;
  }

  private IllegalArgumentException tooLarge(int c, long len) {
    return new IllegalArgumentException(
        "a value of string column '"
            + schema.fields()[c].name()
            + "' has "
            + len
            + " bytes, more than a batch reserves for that column ("
            + layout.dataCapacity[c]
            + "); raise spark.overlap.batch.stringBytesPerRow or spark.overlap.staging.bufferSize");
  }
}
