package dev.overlap.executor.output.rows;

import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostColumnVector;
import dev.overlap.executor.compute.DeclaredOutput;
import dev.overlap.executor.pipeline.ResultBatch;
import dev.overlap.executor.resource.Closing;
import dev.overlap.executor.types.NestedTypes;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * A kernel's output back in host memory, with the schema the kernel declared. Owns its columns;
 * {@link #close} frees them. Rows from {@link #rows} read the columns in place and are reused
 * between calls to {@code next()} (Spark's usual contract): copy a row to keep it past the table.
 */
public final class HostTable implements ResultBatch<InternalRow> {
  private final StructType schema;
  private final HostColumnVector[] columns;
  private final int rows;
  private boolean closed;

  /**
   * Takes ownership of {@code columns}.
   *
   * @throws IllegalArgumentException naming the column whose cuDF type differs from the schema's
   *     (the columns are closed then)
   */
  public HostTable(StructType schema, HostColumnVector[] columns, String producer) {
    try {
      DType[] types = new DType[columns.length];
      for (int c = 0; c < columns.length; c++) {
        types[c] = columns[c].getType();
      }
      DeclaredOutput.check(schema, types, producer);
      for (int c = 0; c < columns.length; c++) {
        DeclaredOutput.checkNested(schema.fields()[c], NestedTypes.of(columns[c]), producer);
      }
      long n = columns.length == 0 ? 0 : columns[0].getRowCount();
      for (int c = 0; c < columns.length; c++) {
        if (columns[c].getRowCount() != n) {
          throw new IllegalArgumentException(
              producer + ": output columns have different row counts");
        }
      }
      if (n > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(producer + ": output of " + n + " rows is too large");
      }
      this.rows = (int) n;
    } catch (RuntimeException e) {
      throw Closing.after(e, List.of(columns));
    }
    this.schema = schema;
    this.columns = columns;
  }

  public int numRows() {
    return rows;
  }

  public StructType schema() {
    return schema;
  }

  public HostColumnVector column(int i) {
    return columns[i];
  }

  /** The rows, read in place; valid until this table is closed. */
  @Override
  public Iterator<InternalRow> rows() {
    ColumnVector[] vectors = new ColumnVector[columns.length];
    for (int c = 0; c < columns.length; c++) {
      vectors[c] = new HostColumnAdapter(schema.fields()[c].dataType(), columns[c]);
    }
    return new ColumnarBatch(vectors, rows).rowIterator();
  }

  @Override
  public void close() {
    if (closed) {
      throw new IllegalStateException("HostTable closed twice");
    }
    closed = true;
    Closing.all(List.of(columns));
  }
}
