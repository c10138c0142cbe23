package dev.overlap.executor.spark;

import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.api.GpuKernel;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.device.CudfStages;
import dev.overlap.executor.device.GpuRuntime;
import dev.overlap.executor.pack.BatchLayout;
import dev.overlap.executor.pack.BatchSource;
import dev.overlap.executor.pack.ColumnType;
import dev.overlap.executor.pack.ColumnarSource;
import dev.overlap.executor.pack.HostBatch;
import dev.overlap.executor.pack.HostBatchWriter;
import dev.overlap.executor.pack.RowSource;
import dev.overlap.executor.pipeline.TaskTag;
import dev.overlap.executor.rows.HostTable;
import java.io.Serializable;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.TaskCompletionListener;

/**
 * Runs a kernel over one partition on the executor: through the GPU pipeline when the executor has
 * a GPU, else through the kernel's CPU implementation. Serialized with the job's closures.
 */
public final class PartitionRunner implements Serializable {
  private static final long serialVersionUID = 1L;

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

  /** Per-job keys from the job's settings; startup keys are the executor's. */
  private OverlapConf job() {
    if (jobConf == null) {
      jobConf = OverlapConf.fromMap(jobSettings);
    }
    return jobConf;
  }

  public Iterator<InternalRow> runRows(Iterator<InternalRow> rows) {
    if (useGpu()) {
      return runGpu(w -> new RowSource(rows, w));
    }
    return CpuPath.run(kernel.cpu(), inSchema, outSchema, report, rows);
  }

  /** Batches of the plan {@link ColumnarPlans#columnarChild} found. */
  public Iterator<InternalRow> runColumnar(Iterator<ColumnarBatch> batches) {
    if (useGpu()) {
      return runGpu(w -> new ColumnarSource(batches, w));
    }
    return CpuPath.run(kernel.cpu(), inSchema, outSchema, report, CpuPath.flatten(batches));
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

  /**
   * The task's batches through the executor pipeline, keeping up to {@code
   * spark.overlap.prefetch.batchesPerTask} in flight; the result rows in order.
   */
  private Iterator<InternalRow> runGpu(
      Function<HostBatchWriter, BatchSource<HostMemoryBuffer, HostBatch>> input) {
    GpuRuntime gpu = ExecutorState.runtime().orElseThrow();
    OverlapConf job = job();
    ColumnType[] types = ColumnType.forSchema(inSchema, "input of " + kernel.name());
    BatchLayout layout =
        new BatchLayout(
            types,
            gpu.conf().get(OverlapConf.STAGING_BUFFER_SIZE),
            job.get(OverlapConf.BATCH_MAX_ROWS),
            job.get(OverlapConf.STRING_BYTES_PER_ROW));
    BatchSource<HostMemoryBuffer, HostBatch> source =
        input.apply(new HostBatchWriter(inSchema, layout));
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
    TaskDriver<HostMemoryBuffer, HostBatch, HostTable, InternalRow> driver =
        new TaskDriver<>(
            gpu.pipeline(),
            gpu.staging(),
            new CudfStages(
                gpu.streams(),
                kernel,
                outSchema,
                new CudfStages.Options(Long.MAX_VALUE, false, job.get(OverlapConf.RESULTS_PINNED))),
            source,
            new TaskTag(
                ctx == null ? -1 : ctx.taskAttemptId(), ctx == null ? -1 : ctx.partitionId(), name),
            job.get(OverlapConf.PREFETCH_BATCHES_PER_TASK),
            report == null ? null : this::record);
    if (ctx != null) {
      // Runs on success, failure and kill alike: nothing of this task stays in the pipeline.
      ctx.addTaskCompletionListener((TaskCompletionListener) c -> driver.finish());
    }
    return driver;
  }

  private void record(TaskDriver.Figures f) {
    Map<PipelineStage, Long> nanos = new EnumMap<>(PipelineStage.class);
    nanos.put(PipelineStage.PACK, f.packNanos());
    f.busyNanos().forEach((s, n) -> nanos.put(SparkEngine.publicStage(s), n));
    report.addGpuTask(
        new JobReport.GpuTask(
            f.rowsIn(),
            f.rowsOut(),
            f.batches(),
            f.bytes(),
            nanos,
            f.stagingWaitNanos(),
            f.resultWaitNanos()));
  }
}
