package dev.overlap.executor.spark;

import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostMemoryBuffer;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.GpuKernel;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.InputPath;
import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.device.CudfStages;
import dev.overlap.executor.device.DeviceResult;
import dev.overlap.executor.device.DeviceTables;
import dev.overlap.executor.device.EncodedParquet;
import dev.overlap.executor.device.FencedStages;
import dev.overlap.executor.device.GpuHealth;
import dev.overlap.executor.device.GpuRuntime;
import dev.overlap.executor.device.ParquetEncodeStages;
import dev.overlap.executor.device.ParquetStages;
import dev.overlap.executor.pack.BatchLayout;
import dev.overlap.executor.pack.BatchSource;
import dev.overlap.executor.pack.ColumnType;
import dev.overlap.executor.pack.ColumnarSource;
import dev.overlap.executor.pack.HostBatch;
import dev.overlap.executor.pack.HostBatchWriter;
import dev.overlap.executor.pack.RowSource;
import dev.overlap.executor.pipeline.BatchStages;
import dev.overlap.executor.pipeline.PackedBatch;
import dev.overlap.executor.pipeline.ResultBatch;
import dev.overlap.executor.rows.HostTable;
import dev.overlap.executor.scan.FilePlan;
import dev.overlap.executor.scan.NotForGpu;
import dev.overlap.executor.scan.ParquetSource;
import java.io.IOException;
import java.io.OutputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.OutputWriter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.TaskCompletionListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a kernel over one partition on the executor: through the GPU pipeline when the executor has
 * a GPU, else through the kernel's CPU implementation. Serialized with the job's closures.
 */
public final class PartitionRunner implements Serializable {
  private static final long serialVersionUID = 1L;

  private static final Logger LOG = LoggerFactory.getLogger(PartitionRunner.class);
  // Each fallback reason is logged once per executor.
  private static final Set<String> FALLBACKS_LOGGED = ConcurrentHashMap.newKeySet();

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
      return runGpu(InputPath.ROWS, w -> new RowSource(rows, w), ROWS);
    }
    return CpuPath.run(kernel.cpu(), inSchema, outSchema, report, rows);
  }

  /** Batches of the plan {@link ColumnarPlans#columnar} found, its selected columns only. */
  public Iterator<InternalRow> runColumnar(Iterator<ColumnarBatch> batches) {
    if (useGpu()) {
      return runGpu(InputPath.COLUMNAR, w -> new ColumnarSource(batches, w), ROWS);
    }
    return CpuPath.run(kernel.cpu(), inSchema, outSchema, report, CpuPath.flatten(batches));
  }

  /**
   * The RAPIDS Accelerator's device batches of this partition ({@link RapidsInput}): straight to
   * the compute stage, no packing and no upload. They need this executor's GPU.
   */
  public Iterator<InternalRow> runDeviceTables(Iterator<Table> tables) {
    if (!useGpu()) {
      throw new IllegalStateException(
          "RAPIDS device batches reached executor "
              + ExecutorState.executorId()
              + ", where Overlap runs without a GPU ("
              + ExecutorState.status().reason()
              + "); set "
              + OverlapConf.RAPIDS_INPUT.key()
              + "=OFF");
    }
    GpuRuntime gpu = ExecutorState.runtime().orElseThrow();
    DType[] types = new DType[inSchema.fields().length];
    for (int i = 0; i < types.length; i++) {
      types[i] = ColumnType.dtypeOf(inSchema.fields()[i].dataType());
    }
    return drive(
        gpu,
        new DeviceTables.Stages(kernelStages(gpu, job())),
        new DeviceTables.Source(tables, types, RapidsInput::admit),
        f -> record(InputPath.RAPIDS, f, ROWS));
  }

  private boolean useGpu() {
    GpuStatus status = ExecutorState.status();
    boolean enabled = job().get(OverlapConf.ENABLED);
    if (status.gpu() && enabled) {
      return true;
    }
    if (enabled) {
      FatalErrorPolicy.refuseIfFenced();
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
   * A partition of a Parquet scan: the GPU decodes its files' column chunks unless the job chose
   * the host path or a file needs it ({@code hostBatches}, Spark's own decode, is then read).
   */
  public Iterator<InternalRow> runParquet(
      ParquetInput input, int partition, Iterator<ColumnarBatch> hostBatches) {
    if (!useGpu()) {
      return CpuPath.run(kernel.cpu(), inSchema, outSchema, report, CpuPath.flatten(hostBatches));
    }
    return gpuParquet(input, partition, hostBatches, ROWS);
  }

  /** The GPU path of a Parquet partition, its results as {@code mode} makes them. */
  private <R extends ResultBatch<T>, T> Iterator<T> gpuParquet(
      ParquetInput input, int partition, Iterator<ColumnarBatch> hostBatches, Results<R, T> mode) {
    OverlapConf.ParquetDecode mode0 = job().get(OverlapConf.PARQUET_DECODE);
    if (mode0 == OverlapConf.ParquetDecode.HOST) {
      return runGpu(InputPath.COLUMNAR, w -> new ColumnarSource(hostBatches, w), mode);
    }
    List<FilePlan> plans;
    try {
      plans = input.plan(partition);
    } catch (NotForGpu e) {
      if (mode0 == OverlapConf.ParquetDecode.GPU) {
        throw new IllegalStateException(
            e.reason()
                + ". "
                + OverlapConf.PARQUET_DECODE.key()
                + "=GPU forbids decoding it on the host; set it to AUTO to let it.");
      }
      if (FALLBACKS_LOGGED.add(e.reason())) {
        LOG.info("Parquet decoded on the host: {}", e.reason());
      }
      if (report != null) {
        report.addFallback(e.reason());
      }
      return runGpu(InputPath.COLUMNAR, w -> new ColumnarSource(hostBatches, w), mode);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    GpuRuntime gpu = ExecutorState.runtime().orElseThrow();
    OverlapConf job = job();
    ParquetSource source =
        new ParquetSource(
            plans,
            input.conf(),
            job.get(OverlapConf.PARQUET_BATCH_BYTES),
            job.get(OverlapConf.BATCH_MAX_ROWS));
    DType[] types = new DType[inSchema.fields().length];
    for (int i = 0; i < types.length; i++) {
      types[i] = ColumnType.dtypeOf(inSchema.fields()[i].dataType());
    }
    ParquetStages stages = new ParquetStages(gpu.streams(), kernelStages(gpu, job), types);
    return drive(
        gpu,
        mode.finish(stages),
        source,
        f -> {
          record(InputPath.PARQUET, f, mode);
          if (report != null) {
            report.addScan(
                new JobReport.ScanFigures(
                    source.filesRead(),
                    source.rowGroupsRead(),
                    source.compressedBytesRead(),
                    source.decodeNanos()));
          }
        });
  }

  private CudfStages kernelStages(GpuRuntime gpu, OverlapConf job) {
    return new CudfStages(
        gpu.streams(),
        kernel,
        outSchema,
        new CudfStages.Options(Long.MAX_VALUE, false, job.get(OverlapConf.RESULTS_PINNED)));
  }

  /**
   * The task's batches through the executor pipeline, keeping up to {@code
   * spark.overlap.prefetch.batchesPerTask} in flight; the result rows in order.
   */
  private <R extends ResultBatch<T>, T> Iterator<T> runGpu(
      InputPath path,
      Function<HostBatchWriter, BatchSource<HostMemoryBuffer, HostBatch>> input,
      Results<R, T> mode) {
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
    return drive(gpu, mode.finish(kernelStages(gpu, job)), source, f -> record(path, f, mode));
  }

  private <H extends PackedBatch, R extends ResultBatch<T>, T> Iterator<T> drive(
      GpuRuntime gpu,
      BatchStages<H, ?, ?, R> stages,
      BatchSource<HostMemoryBuffer, H> source,
      Consumer<TaskDriver.Figures> onFinish) {
    TaskContext ctx = TaskContext.get();
    GpuHealth health = gpu.health();
    TaskDriver<HostMemoryBuffer, H, R, T> driver =
        new TaskDriver<>(
            gpu.pipeline(),
            gpu.staging(),
            FencedStages.of(stages, health),
            source,
            TaskTags.of(ctx),
            job().get(OverlapConf.PREFETCH_BATCHES_PER_TASK),
            report == null ? null : onFinish,
            // A killed task's waits end even when Spark does not interrupt its thread; so do they
            // once the GPU is fenced (the staging buffers it holds never come back).
            () -> health.fenced() || (ctx != null && ctx.isInterrupted()));
    if (ctx != null) {
      // Runs on success, failure and kill alike: nothing of this task stays in the pipeline.
      ctx.addTaskCompletionListener((TaskCompletionListener) c -> driver.finish());
    }
    return FatalErrorPolicy.guard(driver, health);
  }

  private void record(InputPath path, TaskDriver.Figures f, Results<?, ?> mode) {
    Map<PipelineStage, Long> nanos = new EnumMap<>(PipelineStage.class);
    nanos.put(PipelineStage.PACK, f.packNanos());
    f.busyNanos().forEach(nanos::put);
    report.addGpuTask(
        new JobReport.GpuTask(
            path,
            f.rowsIn(),
            mode.rowsOut(f),
            f.batches(),
            f.bytes(),
            nanos,
            f.stagingWaitNanos(),
            f.resultWaitNanos(),
            path == InputPath.RAPIDS ? f.upstreamNanos() : 0));
  }

  // ---- results: rows back to Spark, or Parquet files written by the task ----------------------

  /** What the download stage makes of a kernel's output, and what the task takes from it. */
  private interface Results<R extends ResultBatch<T>, T> {
    <H extends AutoCloseable, D extends AutoCloseable> BatchStages<H, D, DeviceResult, R> finish(
        BatchStages<H, D, DeviceResult, HostTable> stages);

    /** The task's output rows, for the report. */
    long rowsOut(TaskDriver.Figures f);
  }

  /** The output's rows, copied back column by column and handed to Spark. */
  private static final Results<HostTable, InternalRow> ROWS =
      new Results<>() {
        @Override
        public <H extends AutoCloseable, D extends AutoCloseable>
            BatchStages<H, D, DeviceResult, HostTable> finish(
                BatchStages<H, D, DeviceResult, HostTable> stages) {
          return stages;
        }

        @Override
        public long rowsOut(TaskDriver.Figures f) {
          return f.rowsOut();
        }
      };

  /** The output encoded as Parquet on the device ({@link ParquetEncodeStages}), for one task. */
  private final class Encode implements Results<EncodedParquet, EncodedParquet> {
    private final ParquetOutput output;
    private ParquetEncodeStages<?, ?> stages;
    private long rows;

    Encode(ParquetOutput output) {
      this.output = output;
    }

    @Override
    public <H extends AutoCloseable, D extends AutoCloseable>
        BatchStages<H, D, DeviceResult, EncodedParquet> finish(
            BatchStages<H, D, DeviceResult, HostTable> inner) {
      ParquetEncodeStages<H, D> e =
          new ParquetEncodeStages<>(inner, outSchema, output, kernel.name());
      stages = e;
      return e;
    }

    @Override
    public long rowsOut(TaskDriver.Figures f) {
      return rows;
    }

    /**
     * Writes the task's encoded results into files of its attempt, in order, then the end of its
     * last file; each file is closed once complete. The encoding stages are closed at the end,
     * whatever happened.
     */
    long writeTo(Iterator<EncodedParquet> results, TaskFiles files) throws IOException {
      byte[] scratch = new byte[1 << 20];
      OutputStream out = null;
      try {
        while (results.hasNext()) {
          EncodedParquet e = results.next();
          rows += e.rowCount();
          out = append(e, out, files, scratch);
        }
        if (stages != null) {
          try (EncodedParquet end = stages.finish()) {
            if (end != null) {
              out = append(end, out, files, scratch);
            }
          }
        }
        if (out != null) {
          OutputStream o = out;
          out = null;
          o.close();
        }
        return rows;
      } catch (IOException e) {
        throw closeAfter(e, out);
      } catch (RuntimeException e) {
        throw closeAfter(e, out);
      } catch (Error e) {
        throw closeAfter(e, out);
      } finally {
        if (stages != null) {
          stages.close();
        }
      }
    }

    /** Closes {@code out} and the stages after {@code failure}; failures to are added to it. */
    private <X extends Throwable> X closeAfter(X failure, OutputStream out) {
      try {
        if (out != null) {
          out.close();
        }
      } catch (IOException | RuntimeException | Error c) {
        failure.addSuppressed(c);
      }
      try {
        if (stages != null) {
          stages.close();
        }
      } catch (RuntimeException | Error c) {
        failure.addSuppressed(c);
      }
      return failure;
    }

    private OutputStream append(EncodedParquet e, OutputStream out, TaskFiles files, byte[] scratch)
        throws IOException {
      OutputStream o = out == null ? files.create(output.extension()) : out;
      try {
        e.writeTo(o, scratch);
      } catch (IOException x) {
        throw out == null ? closeAfter(x, o) : x;
      } catch (RuntimeException x) {
        throw out == null ? closeAfter(x, o) : x;
      }
      if (e.endsFile()) {
        o.close();
        return null;
      }
      return o;
    }
  }

  /**
   * What a write task did.
   *
   * @param gpu whether its output was encoded on the GPU
   */
  record Wrote(long rows, boolean gpu) {}

  /** Write mode: the task's rows through the kernel, written as Parquet files of {@code files}. */
  Wrote writeRows(Iterator<InternalRow> rows, ParquetWrite write, TaskFiles files)
      throws IOException {
    if (useGpu()) {
      Encode e = new Encode(write.output());
      return new Wrote(
          e.writeTo(runGpu(InputPath.ROWS, w -> new RowSource(rows, w), e), files), true);
    }
    return cpuWrite(CpuPath.run(kernel.cpu(), inSchema, outSchema, report, rows), write, files);
  }

  /** As {@link #writeRows}, for batches of a columnar plan. */
  Wrote writeColumnar(Iterator<ColumnarBatch> batches, ParquetWrite write, TaskFiles files)
      throws IOException {
    if (useGpu()) {
      Encode e = new Encode(write.output());
      return new Wrote(
          e.writeTo(runGpu(InputPath.COLUMNAR, w -> new ColumnarSource(batches, w), e), files),
          true);
    }
    return cpuWrite(
        CpuPath.run(kernel.cpu(), inSchema, outSchema, report, CpuPath.flatten(batches)),
        write,
        files);
  }

  /** As {@link #writeRows}, for a partition of a Parquet scan. */
  Wrote writeParquet(
      ParquetInput input,
      int partition,
      Iterator<ColumnarBatch> hostBatches,
      ParquetWrite write,
      TaskFiles files)
      throws IOException {
    if (useGpu()) {
      Encode e = new Encode(write.output());
      return new Wrote(e.writeTo(gpuParquet(input, partition, hostBatches, e), files), true);
    }
    return cpuWrite(
        CpuPath.run(kernel.cpu(), inSchema, outSchema, report, CpuPath.flatten(hostBatches)),
        write,
        files);
  }

  /** Without a GPU: the CPU implementation's rows through Spark's own Parquet writer. */
  private Wrote cpuWrite(Iterator<InternalRow> rows, ParquetWrite write, TaskFiles files)
      throws IOException {
    long perFile = write.output().rowsPerFile();
    OutputWriter writer = null;
    List<String> paths = new java.util.ArrayList<>();
    long n = 0;
    long inFile = 0;
    try {
      while (rows.hasNext()) {
        InternalRow row = rows.next();
        if (writer == null) {
          String path = files.newFile(write.cpuWriter().getFileExtension(files.context()));
          paths.add(path);
          writer = write.cpuWriter().newInstance(path, outSchema, files.context());
        }
        writer.write(row);
        n++;
        inFile++;
        if (perFile > 0 && inFile >= perFile) {
          OutputWriter w = writer;
          writer = null;
          inFile = 0;
          w.close();
        }
      }
    } catch (RuntimeException | Error e) {
      if (writer != null) {
        try {
          writer.close();
        } catch (RuntimeException | Error c) {
          e.addSuppressed(c);
        }
      }
      throw e;
    }
    if (writer != null) {
      writer.close();
    }
    for (String path : paths) {
      files.addFileBytes(path);
    }
    return new Wrote(n, false);
  }
}
