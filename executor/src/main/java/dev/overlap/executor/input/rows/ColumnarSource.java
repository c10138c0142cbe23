package dev.overlap.executor.input.rows;

import java.util.Iterator;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** Spark columnar batches (a vectorized scan's), packed column by column with bulk copies. */
public final class ColumnarSource extends WriterSource {
  private final Iterator<ColumnarBatch> batches;
  private ColumnarBatch current;
  private int offset;
  private long read;

  public ColumnarSource(Iterator<ColumnarBatch> batches, HostBatchWriter writer) {
    super(writer);
    this.batches = batches;
  }

  @Override
  boolean fill(HostBatchWriter w) {
    while (!w.isFull()) {
      if (current == null || offset >= current.numRows()) {
        // Only now may the source be advanced: readers reuse the batch object.
        if (!batches.hasNext()) {
          current = null;
          break;
        }
        current = batches.next();
        offset = 0;
        read += current.numRows();
        continue;
      }
      int n = w.appendColumns(current, offset, current.numRows() - offset);
      offset += n;
      if (n == 0) {
        break;
      }
    }
    return (current != null && offset < current.numRows()) || batches.hasNext();
  }

  @Override
  public long rowsRead() {
    return read;
  }
}
