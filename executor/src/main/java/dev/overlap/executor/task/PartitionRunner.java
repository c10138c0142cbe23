package dev.overlap.executor.task;

import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.api.GpuKernel;
import dev.overlap.executor.api.InputPath;
import dev.overlap.executor.compute.DeviceResult;
import dev.overlap.executor.compute.KernelInput;
import dev.overlap.executor.compute.KernelStage;
import dev.overlap.executor.config.NoGpuMode;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.config.ParquetDecodeMode;
import dev.overlap.executor.gpu.GpuRuntime;
import dev.overlap.executor.input.parquet.FilePlan;
import dev.overlap.executor.input.parquet.ParquetDecode;
import dev.overlap.executor.input.parquet.ParquetInput;
import dev.overlap.executor.input.parquet.ParquetSource;
import dev.overlap.executor.input.parquet.ParquetUpload;
import dev.overlap.executor.input.rapids.DeviceTables;
import dev.overlap.executor.input.rapids.RapidsBatches;
import dev.overlap.executor.input.rows.BatchLayout;
import dev.overlap.executor.input.rows.ColumnarSource;
import dev.overlap.executor.input.rows.HostBatch;
import dev.overlap.executor.input.rows.HostBatchWriter;
import dev.overlap.executor.input.rows.PackedTable;
import dev.overlap.executor.input.rows.PackedUpload;
import dev.overlap.executor.input.rows.RowSource;
import dev.overlap.executor.output.TaskOutput;
import dev.overlap.executor.output.parquet.CpuParquetWrite;
import dev.overlap.executor.output.parquet.EncodedFiles;
import dev.overlap.executor.output.parquet.ParquetWrite;
import dev.overlap.executor.output.parquet.TaskFiles;
import dev.overlap.executor.output.parquet.Wrote;
import dev.overlap.executor.output.rows.RowsOutput;
import dev.overlap.executor.pipeline.BatchSource;
import dev.overlap.executor.pipeline.BatchStages;
import dev.overlap.executor.pipeline.ResultBatch;
import dev.overlap.executor.pipeline.Upload;
import dev.overlap.executor.plugin.ExecutorState;
import dev.overlap.executor.types.ColumnType;
import java.io.IOException;
import java.io.Serializable;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.StructType;

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
  // The report (when one was passed) and the call's stage accumulators: each task's figures.
  private final TaskFigures figures;
  // The job's values of the keys that are not startup-only, from JobSettings.from.
  private final Map<String, String> jobSettings;
  // Why the GPU does not take the kernel's schemas (every task runs its CPU implementation); null
  // when it does.
  private final String gpuNotTaken;
  private transient OverlapConf jobConf;

  public PartitionRunner(
      GpuKernel kernel,
      StructType inSchema,
      StructType outSchema,
      JobReport report,
      Map<String, String> jobSettings) {
    this(kernel, inSchema, outSchema, report, jobSettings, null, null);
  }

  /**
   * @param gpuNotTaken why the GPU does not take the kernel's schemas, so that every task runs the
   *     kernel's CPU implementation (which it has); null when it does
   * @param stage the call's stage accumulators, registered on the driver; null for none
   */
  public PartitionRunner(
      GpuKernel kernel,
      StructType inSchema,
      StructType outSchema,
      JobReport report,
      Map<String, String> jobSettings,
      String gpuNotTaken,
      StageAccumulators stage) {
    this.kernel = kernel;
    this.inSchema = inSchema;
    this.outSchema = outSchema;
    this.report = report;
    this.figures = TaskFigures.of(report, stage);
    this.jobSettings = jobSettings;
    this.gpuNotTaken = gpuNotTaken;
  }

  /** Whether every task runs the kernel's CPU implementation, the GPU not taking its schemas. */
  public boolean cpuOnly() {
    return gpuNotTaken != null;
  }

  /** Per-job keys from the job's settings; startup keys are the executor's. */
  private OverlapConf job() {
    if (jobConf == null) {
      jobConf = OverlapConf.fromMap(jobSettings);
    }
    return jobConf;
  }

  /** The kernel's output rows of one partition: on the GPU, or by its CPU implementation. */
  public Iterator<InternalRow> map(TaskInput in) {
    if (!useGpu()) {
      return cpu(in);
    }
    RowsOutput out = new RowsOutput(outSchema, kernel.name());
    // A Parquet partition's files can be read again: after a fatal GPU error, on the CPU, from
    // the first input row whose results were not handed on, unless the job forbids the CPU path.
    boolean cpuAllowed =
        kernel.cpu() != null && job().get(OverlapConf.NO_GPU_MODE) != NoGpuMode.FAIL;
    return in instanceof TaskInput.Parquet p && cpuAllowed
        ? parquet(p, out, from -> cpu(Iterators.drop(in.cpuRows(), from)))
        : gpu(in, out);
  }

  /**
   * Write mode: the partition through the kernel, its output written as Parquet files of {@code
   * files}, encoded on the GPU, or by Spark's writer from the CPU implementation's rows.
   */
  public Wrote write(TaskInput in, ParquetWrite write, TaskFiles files) throws IOException {
    if (!useGpu()) {
      return CpuParquetWrite.write(cpu(in), outSchema, write, files);
    }
    EncodedFiles e = new EncodedFiles(write.output(), outSchema, kernel.name());
    return new Wrote(e.writeTo(gpu(in, e), files), true);
  }

  private Iterator<InternalRow> cpu(TaskInput in) {
    return cpu(in.cpuRows());
  }

  private Iterator<InternalRow> cpu(Iterator<InternalRow> rows) {
    return CpuPath.run(kernel.cpu(), inSchema, outSchema, figures, rows);
  }

  /** The GPU path of one partition, by its input path, its results as {@code out} makes them. */
  private <R extends ResultBatch<T>, T> Iterator<T> gpu(TaskInput in, TaskOutput<R, T> out) {
    if (in instanceof TaskInput.Rows r) {
      return packed(InputPath.ROWS, w -> new RowSource(r.rows(), w), out);
    } else if (in instanceof TaskInput.Columnar c) {
      return packed(InputPath.COLUMNAR, w -> new ColumnarSource(c.batches(), w), out);
    } else if (in instanceof TaskInput.Parquet p) {
      return parquet(p, out, null);
    }
    GpuRuntime gpu = ExecutorState.runtime().orElseThrow();
    return GpuTaskRun.drive(
        gpu,
        job(),
        figures,
        stages(gpu, DeviceTables.upload(), DeviceTables.kernelInput(), out),
        new DeviceTables.Source(
            ((TaskInput.Rapids) in).tables(), ColumnType.dtypesOf(inSchema), RapidsBatches::admit),
        f -> GpuTaskRun.record(figures, InputPath.RAPIDS, f, out));
  }

  private boolean useGpu() {
    return gpuNotTaken == null && GpuOrCpu.useGpu(kernel, job());
  }

  /**
   * The GPU path of a Parquet partition, its results as {@code mode} makes them.
   *
   * @param afterFault the partition's results without the GPU from an input row on, taken when the
   *     GPU fails fatally ({@link FaultFallback}); null to fail the task then
   */
  private <R extends ResultBatch<T>, T> Iterator<T> parquet(
      TaskInput.Parquet in, TaskOutput<R, T> mode, LongFunction<Iterator<T>> afterFault) {
    ParquetInput input = in.input();
    List<FilePlan> plans = ParquetPlanOrHost.plans(in, job(), report, figures);
    if (plans == null) {
      return host(in, mode, afterFault);
    }
    GpuRuntime gpu = ExecutorState.runtime().orElseThrow();
    OverlapConf job = job();
    LongSupplier[] handedOn = {() -> -1};
    FellBack fellBack = new FellBack(figures, plans);
    Iterator<T> onGpu = parquetOnGpu(gpu, job, plans, input, mode, h -> handedOn[0] = h, fellBack);
    // Spark's rows of a Delta table with deletion vectors are fewer than the batches' rows.
    boolean sameRows = plans.stream().allMatch(p -> p.deleted() == null);
    if (afterFault != null) {
      onGpu =
          new FaultFallback<>(
              onGpu,
              afterFault,
              () -> sameRows ? handedOn[0].getAsLong() : -1,
              (why, from) -> fellBack.from(from));
    }
    if (job.get(OverlapConf.PARQUET_DECODE) == ParquetDecodeMode.GPU) {
      return onGpu;
    }
    return new DecodeFallback<>(
        onGpu, () -> host(in, mode, afterFault), d -> ParquetPlanOrHost.decodeFailed(d, report));
  }

  /**
   * A Parquet partition decoded on the host, its batches through the GPU; on the CPU from its start
   * instead should the GPU fail or the kernel leave a batch to the CPU before any result ({@link
   * FaultFallback}, the input rows of the host's batches not being counted).
   */
  private <R extends ResultBatch<T>, T> Iterator<T> host(
      TaskInput.Parquet in, TaskOutput<R, T> mode, LongFunction<Iterator<T>> afterFault) {
    Iterator<T> onGpu = gpu(in.host(), mode);
    return afterFault == null
        ? onGpu
        : new FaultFallback<>(onGpu, afterFault, () -> -1, (why, from) -> {});
  }

  /** The GPU's decode of a Parquet partition's planned files, its results as {@code mode}'s. */
  private <R extends ResultBatch<T>, T> Iterator<T> parquetOnGpu(
      GpuRuntime gpu,
      OverlapConf job,
      List<FilePlan> plans,
      ParquetInput input,
      TaskOutput<R, T> mode,
      Consumer<LongSupplier> handedOn,
      FellBack fellBack) {
    ParquetSource source =
        new ParquetSource(
            plans,
            input.conf(),
            job.get(OverlapConf.PARQUET_BATCH_BYTES),
            job.get(OverlapConf.BATCH_MAX_ROWS));
    return GpuTaskRun.drive(
        gpu,
        job,
        figures,
        stages(
            gpu,
            new ParquetUpload(gpu.streams(), kernel.name()),
            new ParquetDecode(inSchema),
            mode),
        source,
        f -> {
          fellBack.gpuEnded(InputPath.PARQUET, f, mode);
          GpuTaskRun.recordScan(figures, source);
        },
        handedOn);
  }

  /** A task's stages: its input path's upload and table, the kernel, its output's download. */
  private <H extends AutoCloseable, D extends AutoCloseable, R extends ResultBatch<?>>
      BatchStages<H, D, DeviceResult, R> stages(
          GpuRuntime gpu, Upload<H, D> upload, KernelInput<D> input, TaskOutput<R, ?> out) {
    return BatchStages.of(
        upload,
        new KernelStage<>(kernel, input),
        out.download(gpu.streams(), job().get(OverlapConf.RESULTS_PINNED)));
  }

  /**
   * The task's batches through the executor pipeline, keeping up to {@code
   * spark.overlap.prefetch.batchesPerTask} in flight; the result rows in order.
   */
  private <R extends ResultBatch<T>, T> Iterator<T> packed(
      InputPath path,
      Function<HostBatchWriter, BatchSource<HostMemoryBuffer, HostBatch>> input,
      TaskOutput<R, T> mode) {
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
    return GpuTaskRun.drive(
        gpu,
        job,
        figures,
        stages(gpu, new PackedUpload(gpu.streams(), kernel.name()), new PackedTable(), mode),
        source,
        f -> GpuTaskRun.record(figures, path, f, mode));
  }
}
