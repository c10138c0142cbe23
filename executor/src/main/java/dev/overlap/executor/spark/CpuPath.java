package dev.overlap.executor.spark;

import dev.overlap.executor.api.CpuKernel;
import java.util.Collections;
import java.util.Iterator;
import java.util.NoSuchElementException;
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
    // Rows in, rows out, and nanoseconds the task's thread spent inside the kernel.
    long[] counts = new long[3];
    Iterator<Row> in =
        new Iterator<>() {
          @Override
          public boolean hasNext() {
            return rows.hasNext();
          }

          @Override
          public Row next() {
            counts[0]++;
            return (Row) toRow.apply(rows.next());
          }
        };
    long start = System.nanoTime();
    Iterator<Row> out = cpu.apply(in);
    counts[2] += System.nanoTime() - start;
    TaskContext ctx = TaskContext.get();
    if (ctx != null && report != null) {
      ctx.addTaskCompletionListener(
          (TaskCompletionListener) c -> report.addCpuTask(counts[0], counts[1], counts[2]));
    }
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        long from = System.nanoTime();
        boolean more = out.hasNext();
        counts[2] += System.nanoTime() - from;
        return more;
      }

      @Override
      public InternalRow next() {
        counts[1]++;
        long from = System.nanoTime();
        Row r = out.next();
        counts[2] += System.nanoTime() - from;
        return (InternalRow) toInternal.apply(r);
      }
    };
  }

  /** The rows of columnar batches, one batch after the other. */
  static Iterator<InternalRow> flatten(Iterator<ColumnarBatch> batches) {
    return new Iterator<>() {
      private Iterator<InternalRow> current = Collections.emptyIterator();

      @Override
      public boolean hasNext() {
        while (!current.hasNext() && batches.hasNext()) {
          current = batches.next().rowIterator();
        }
        return current.hasNext();
      }

      @Override
      public InternalRow next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        return current.next();
      }
    };
  }
}
