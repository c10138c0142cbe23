package dev.overlap.executor.spark;

import dev.overlap.executor.api.CpuKernel;
import java.util.Iterator;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.TaskCompletionListener;
import scala.Function1;

/** A partition through the kernel's CPU implementation, on the task's thread. */
final class CpuPath {
  private CpuPath() {}

  /**
   * The kernel's output rows for {@code rows}; the task's figures go to {@code report} (may be
   * null) when the task completes.
   */
  static Iterator<InternalRow> run(
      CpuKernel cpu,
      StructType inSchema,
      StructType outSchema,
      JobReport report,
      Iterator<InternalRow> rows) {
    Function1<Object, Object> toRow = CatalystTypeConverters.createToScalaConverter(inSchema);
    Function1<Object, Object> toInternal =
        CatalystTypeConverters.createToCatalystConverter(outSchema);
    KernelOutput out = new KernelOutput();
    Iterator<Row> in =
        Iterators.map(
            rows,
            r -> {
              out.rowsIn++;
              return (Row) toRow.apply(r);
            });
    long start = System.nanoTime();
    out.rows = cpu.apply(in);
    out.kernelNanos += System.nanoTime() - start;
    TaskContext ctx = TaskContext.get();
    if (ctx != null && report != null) {
      ctx.addTaskCompletionListener(
          (TaskCompletionListener)
              c -> report.addCpuTask(out.rowsIn, out.rowsOut, out.kernelNanos));
    }
    return Iterators.map(out, r -> (InternalRow) toInternal.apply(r));
  }

  /** The rows of columnar batches, one batch after the other. */
  static Iterator<InternalRow> flatten(Iterator<ColumnarBatch> batches) {
    return Iterators.flatMap(batches, ColumnarBatch::rowIterator);
  }

  /**
   * The kernel's output, counting the rows in and out and the nanoseconds the task's thread spends
   * inside the kernel.
   */
  private static final class KernelOutput implements Iterator<Row> {
    private Iterator<Row> rows;
    private long rowsIn;
    private long rowsOut;
    private long kernelNanos;

    @Override
    public boolean hasNext() {
      long from = System.nanoTime();
      boolean more = rows.hasNext();
      kernelNanos += System.nanoTime() - from;
      return more;
    }

    @Override
    public Row next() {
      rowsOut++;
      long from = System.nanoTime();
      Row r = rows.next();
      kernelNanos += System.nanoTime() - from;
      return r;
    }
  }
}
