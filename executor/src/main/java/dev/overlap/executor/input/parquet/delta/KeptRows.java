package dev.overlap.executor.input.parquet.delta;

import java.util.Iterator;
import java.util.NoSuchElementException;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The host's path over a Delta scan with deletion vectors: the rows of Spark's batches that Delta's
 * marking column keeps (0), with the input's columns selected, as Spark's filter would give them.
 * Each row is a view of its batch, valid until the next.
 */
public final class KeptRows implements Iterator<InternalRow> {
  private final Iterator<ColumnarBatch> batches;
  private final int[] columns;
  private final int marked;
  private ColumnarBatch batch;
  private ColumnVector marks;
  private int next;

  /**
   * @param columns the input's columns, by index in each batch
   * @param marked the index of Delta's marking column in each batch
   */
  public KeptRows(Iterator<ColumnarBatch> batches, int[] columns, int marked) {
    this.batches = batches;
    this.columns = columns;
    this.marked = marked;
  }

  @Override
  public boolean hasNext() {
    while (true) {
      if (batch != null) {
        while (next < batch.numRows() && !(kept(next))) {
          next++;
        }
        if (next < batch.numRows()) {
          return true;
        }
      }
      if (!batches.hasNext()) {
        return false;
      }
      ColumnarBatch b = batches.next();
      marks = b.column(marked);
      ColumnVector[] v = new ColumnVector[columns.length];
      for (int i = 0; i < v.length; i++) {
        v[i] = b.column(columns[i]);
      }
      batch = new ColumnarBatch(v, b.numRows());
      next = 0;
    }
  }

  private boolean kept(int row) {
    return !marks.isNullAt(row) && marks.getByte(row) == 0;
  }

  @Override
  public InternalRow next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    return batch.getRow(next++);
  }
}
