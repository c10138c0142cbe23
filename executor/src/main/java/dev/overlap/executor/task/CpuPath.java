package dev.overlap.executor.task;

import dev.overlap.executor.api.CpuKernel;
import dev.overlap.executor.plugin.ExecutorMetrics;
import dev.overlap.executor.plugin.ExecutorState;
import dev.overlap.executor.resource.TaskTag;
import dev.overlap.executor.trace.TraceRecorder;
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
public final class CpuPath {
  private CpuPath() {}

  /**
   * The kernel's output rows for {@code rows}; the task's figures go to {@code figures} (may be
   * null) when the task completes, and the partition is one span of the executor's timeline when it
   * records one ({@link ExecutorState#trace}).
   */
  static Iterator<InternalRow> run(
      CpuKernel cpu,
      StructType inSchema,
      StructType outSchema,
      TaskFigures figures,
      Iterator<InternalRow> rows) {
    return run(
        cpu,
        inSchema,
        outSchema,
        figures,
        ExecutorState.trace().orElse(null),
        TaskContext.get(),
        rows);
  }

  /**
   * {@link #run(CpuKernel, StructType, StructType, TaskFigures, Iterator)} with the timeline's
   * recorder and the task given: the partition's span (from the kernel's call to its last row, or
   * to the task's end when that comes first) goes to {@code trace} when it is not null.
   *
   * @param ctx the task; null outside Spark, where only a partition that runs to its end is traced
   */
  static Iterator<InternalRow> run(
      CpuKernel cpu,
      StructType inSchema,
      StructType outSchema,
      TaskFigures figures,
      TraceRecorder trace,
      TaskContext ctx,
      Iterator<InternalRow> rows) {
    Function1<Object, Object> toRow = CatalystTypeConverters.createToScalaConverter(inSchema);
    Function1<Object, Object> toInternal =
        CatalystTypeConverters.createToCatalystConverter(outSchema);
    KernelOutput out = new KernelOutput(trace, TaskTags.of(ctx));
    Iterator<Row> in =
        Iterators.map(
            rows,
            r -> {
              out.rowsIn++;
              return (Row) toRow.apply(r);
            });
    long start = System.nanoTime();
    out.startNanos = start;
    out.rows = cpu.apply(in);
    out.kernelNanos += System.nanoTime() - start;
    if (ctx != null) {
      ctx.addTaskCompletionListener(
          (TaskCompletionListener)
              c -> {
                out.endSpan(!c.isFailed() && !c.isInterrupted());
                ExecutorMetrics.cpuTaskEnded(out.kernelNanos);
                if (figures != null) {
                  figures.addCpuTask(out.rowsIn, out.rowsOut, out.kernelNanos);
                }
              });
    }
    return Iterators.map(out, r -> (InternalRow) toInternal.apply(r));
  }

  /** The rows of columnar batches, one batch after the other. */
  static Iterator<InternalRow> flatten(Iterator<ColumnarBatch> batches) {
    return Iterators.flatMap(batches, ColumnarBatch::rowIterator);
  }

  /**
   * The kernel's output, counting the rows in and out and the nanoseconds the task's thread spends
   * inside the kernel; tells the recorder (if any) of the partition once, when the output ends or
   * the task does.
   */
  private static final class KernelOutput implements Iterator<Row> {
    private final TraceRecorder trace;
    private final TaskTag task;
    private Iterator<Row> rows;
    private long startNanos;
    private long rowsIn;
    private long rowsOut;
    private long kernelNanos;
    private boolean spanEnded;

    KernelOutput(TraceRecorder trace, TaskTag task) {
      this.trace = trace;
      this.task = task;
    }

    @Override
    public boolean hasNext() {
      long from = System.nanoTime();
      boolean more = rows.hasNext();
      kernelNanos += System.nanoTime() - from;
      if (!more) {
        endSpan(true);
      }
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

    /** Records the partition's span, ending now, unless it is recorded already. */
    void endSpan(boolean ok) {
      if (trace != null && !spanEnded) {
        spanEnded = true;
        trace.cpuPartition(task, startNanos, System.nanoTime(), ok);
      }
    }
  }
}
