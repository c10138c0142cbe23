package dev.overlap.executor.input.rows;

import java.util.Iterator;
import org.apache.spark.sql.catalyst.InternalRow;

/** Spark rows, packed row by row. */
public final class RowSource extends WriterSource {
  private final Iterator<InternalRow> rows;
  private InternalRow carry;
  private long read;

  public RowSource(Iterator<InternalRow> rows, HostBatchWriter writer) {
    super(writer);
    this.rows = rows;
  }

  @Override
  boolean fill(HostBatchWriter w) {
    if (carry != null) {
      w.append(carry); // fits: the batch is empty, and append throws if a lone row cannot
      carry = null;
    }
    while (!w.isFull() && rows.hasNext()) {
      InternalRow r = rows.next();
      read++;
      if (!w.append(r)) {
        carry = r.copy(); // the iterator may reuse the row object
        break;
      }
    }
    return carry != null || rows.hasNext();
  }

  @Override
  public long rowsRead() {
    return read;
  }
}
