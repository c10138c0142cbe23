package dev.overlap.executor.spark;

import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.api.CpuKernel;
import dev.overlap.executor.api.GpuKernel;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.device.CudfStages;
import dev.overlap.executor.device.GpuRuntime;
import dev.overlap.executor.pack.BatchLayout;
import dev.overlap.executor.pack.ColumnType;
import dev.overlap.executor.pack.HostBatch;
import dev.overlap.executor.pack.HostBatchWriter;
import dev.overlap.executor.pipeline.BoundedPool;
import dev.overlap.executor.pipeline.Stage;
import dev.overlap.executor.pipeline.TaskLane;
import dev.overlap.executor.rows.HostTable;
import java.io.Serializable;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.WholeStageCodegenExec;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.TaskCompletionListener;
import scala.Function1;

/**
 * Runs a kernel over one partition on the executor: through the GPU pipeline when the executor has
 * a GPU, else through the kernel's CPU implementation. Serialized with the job's closures.
 */
public final class PartitionRunner implements Serializable {
  private final GpuKernel kernel;
  private final StructType inSchema;
  private final StructType outSchema;
  private final JobReport report;
  // The job's values of the keys that are not startup-only, from OverlapConf.jobSettings.
  private final Map<String, String> jobSettings;
  private transient OverlapConf jobConf;

  public PartitionRunner(
      GpuKernel kernel,
      StructType inSchema,
      StructType outSchema,
      JobReport report,
      Map<String, String> jobSettings) {
    this.kernel = kernel;
    this.inSchema = inSchema;
    this.outSchema = outSchema;
    this.report = report;
    this.jobSettings = jobSettings;
  }

  /**
   * The columnar plan under a plain columnar-to-row conversion (Spark's vectorized Parquet scan,
   * say), whose batches {@link #runColumnar} packs column by column; null when there is none.
   */
  public static SparkPlan columnarChild(SparkPlan plan) {
    SparkPlan p = plan;
    if (p instanceof WholeStageCodegenExec w) {
      p = w.child();
    }
    if (p instanceof ColumnarToRowExec c && c.child().supportsColumnar()) {
      return c.child();
    }
    return null;
  }

  /** Per-job keys from the job's settings; startup keys are the executor's. */
  private OverlapConf job() {
    if (jobConf == null) {
      jobConf = OverlapConf.fromMap(jobSettings);
    }
    return jobConf;
  }

  public Iterator<InternalRow> runRows(Iterator<InternalRow> rows) {
    if (useGpu()) {
      return new GpuIterator(new RowSource(rows));
    }
    return runCpu(rows);
  }

  public Iterator<InternalRow> runColumnar(Iterator<ColumnarBatch> batches) {
    if (useGpu()) {
      return new GpuIterator(new ColumnarSource(batches));
    }
    return runCpu(flatten(batches));
  }

  private boolean useGpu() {
    GpuStatus status = ExecutorState.status();
    boolean enabled = job().get(OverlapConf.ENABLED);
    if (status.gpu() && enabled) {
      return true;
    }
    String reason = enabled ? status.reason() : OverlapConf.ENABLED.key() + "=false for this job";
    if (job().get(OverlapConf.NO_GPU_MODE) == OverlapConf.NoGpuMode.FAIL || kernel.cpu() == null) {
      throw new IllegalStateException(
          "No GPU for kernel "
              + kernel.name()
              + " on executor "
              + ExecutorState.executorId()
              + ": "
              + reason
              + (kernel.cpu() == null
                  ? ". The kernel has no CPU implementation. Run on executors with a GPU"
                      + " (spark.executor.resource.gpu.amount=1 with a discovery script,"
                      + " spark.plugins=dev.overlap.executor.OverlapPlugin) or give the kernel a"
                      + " cpu() implementation."
                  : ". " + OverlapConf.NO_GPU_MODE.key() + "=FAIL forbids the CPU path."));
    }
    return false;
  }

  // ---- CPU path ----------------------------------------------------------------------------

  private Iterator<InternalRow> runCpu(Iterator<InternalRow> rows) {
    CpuKernel cpu = kernel.cpu();
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

  private static Iterator<InternalRow> flatten(Iterator<ColumnarBatch> batches) {
    return new Iterator<>() {
      private Iterator<InternalRow> current = java.util.Collections.emptyIterator();

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

  // ---- GPU path ----------------------------------------------------------------------------

  /** Where a task's input comes from: fills the writer's open batch, says whether more remains. */
  interface BatchSource {
    boolean fill(HostBatchWriter writer);

    long rowsRead();
  }

  static final class RowSource implements BatchSource {
    private final Iterator<InternalRow> rows;
    private InternalRow carry;
    private long read;

    RowSource(Iterator<InternalRow> rows) {
      this.rows = rows;
    }

    @Override
    public boolean fill(HostBatchWriter w) {
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

  static final class ColumnarSource implements BatchSource {
    private final Iterator<ColumnarBatch> batches;
    private ColumnarBatch current;
    private int offset;
    private long read;

    ColumnarSource(Iterator<ColumnarBatch> batches) {
      this.batches = batches;
    }

    @Override
    public boolean fill(HostBatchWriter w) {
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

  /**
   * Feeds the task's batches into the executor pipeline, keeping up to {@code
   * spark.overlap.prefetch.batchesPerTask} in flight, and hands back the result rows in order.
   */
  private final class GpuIterator implements Iterator<InternalRow> {
    private final GpuRuntime gpu = ExecutorState.runtime().orElseThrow();
    private final BatchSource source;
    private final HostBatchWriter writer;
    private final TaskLane<HostBatch, HostTable> lane;
    private boolean more = true;
    private HostTable current;
    private Iterator<InternalRow> rows = java.util.Collections.emptyIterator();
    private long rowsOut;
    private long batches;
    private long bytes;
    private long packNanos;
    private long stagingWait;
    private long resultWait;
    private boolean finished;

    GpuIterator(BatchSource source) {
      this.source = source;
      OverlapConf conf = gpu.conf();
      OverlapConf job = job();
      ColumnType[] types = ColumnType.forSchema(inSchema, "input of " + kernel.name());
      BatchLayout layout =
          new BatchLayout(
              types,
              conf.get(OverlapConf.STAGING_BUFFER_SIZE),
              job.get(OverlapConf.BATCH_MAX_ROWS),
              job.get(OverlapConf.STRING_BYTES_PER_ROW));
      this.writer = new HostBatchWriter(inSchema, layout);
      TaskContext ctx = TaskContext.get();
      String name =
          ctx == null
              ? "task"
              : "stage "
                  + ctx.stageId()
                  + " partition "
                  + ctx.partitionId()
                  + " task "
                  + ctx.taskAttemptId();
      this.lane =
          gpu.pipeline()
              .openLane(
                  name,
                  new CudfStages(
                      gpu.streams(),
                      kernel,
                      outSchema,
                      new CudfStages.Options(
                          Long.MAX_VALUE, false, job.get(OverlapConf.RESULTS_PINNED))),
                  job.get(OverlapConf.PREFETCH_BATCHES_PER_TASK));
      if (ctx != null) {
        // Runs on success, failure and kill alike: nothing of this task stays in the pipeline.
        ctx.addTaskCompletionListener((TaskCompletionListener) c -> finish());
      }
    }

    @Override
    public boolean hasNext() {
      try {
        while (!rows.hasNext()) {
          if (current != null) {
            current.close();
            current = null;
          }
          fill();
          if (lane.pending() == 0) {
            finish();
            return false;
          }
          long waitFrom = System.nanoTime();
          current = lane.next();
          resultWait += System.nanoTime() - waitFrom;
          batches++;
          rows = current.rows();
        }
        return true;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        finish();
        throw new IllegalStateException("interrupted while waiting for the GPU pipeline", e);
      } catch (RuntimeException | Error e) {
        finish();
        throw e;
      }
    }

    @Override
    public InternalRow next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      rowsOut++;
      return rows.next();
    }

    /** Packs and submits batches until the lane is full or the input is done. */
    private void fill() throws InterruptedException {
      BoundedPool<HostMemoryBuffer> pool = gpu.staging();
      while (more && !lane.full()) {
        long waitFrom = System.nanoTime();
        HostMemoryBuffer buf = pool.acquire();
        long start = System.nanoTime();
        stagingWait += start - waitFrom;
        writer.begin(buf, () -> pool.release(buf));
        try {
          more = source.fill(writer);
        } catch (RuntimeException | Error e) {
          writer.abort();
          throw e;
        }
        HostBatch batch = writer.finish();
        long took = System.nanoTime() - start;
        gpu.pipeline().metrics().addPacking(took);
        packNanos += took;
        if (batch.rows() == 0) {
          batch.close();
          break;
        }
        bytes += batch.copyBytes();
        lane.submit(batch, batch.deviceBytes());
      }
    }

    private void finish() {
      if (finished) {
        return;
      }
      finished = true;
      if (current != null) {
        current.close();
        current = null;
      }
      lane.close();
      if (report != null) {
        Map<PipelineStage, Long> nanos = new EnumMap<>(PipelineStage.class);
        nanos.put(PipelineStage.PACK, packNanos);
        for (Stage s : new Stage[] {Stage.UPLOAD, Stage.COMPUTE, Stage.DOWNLOAD}) {
          nanos.put(SparkEngine.publicStage(s), lane.busyNanos(s));
        }
        report.addGpuTask(
            new JobReport.GpuTask(
                source.rowsRead(), rowsOut, batches, bytes, nanos, stagingWait, resultWait));
      }
    }
  }
}
