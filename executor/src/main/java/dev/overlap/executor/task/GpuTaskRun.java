package dev.overlap.executor.task;

import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.api.InputPath;
import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.gpu.FencedStages;
import dev.overlap.executor.gpu.GpuHealth;
import dev.overlap.executor.gpu.GpuRuntime;
import dev.overlap.executor.input.parquet.ParquetSource;
import dev.overlap.executor.output.TaskOutput;
import dev.overlap.executor.pipeline.BatchSource;
import dev.overlap.executor.pipeline.BatchStages;
import dev.overlap.executor.pipeline.PackedBatch;
import dev.overlap.executor.pipeline.ResultBatch;
import dev.overlap.executor.pipeline.TaskDriver;
import dev.overlap.executor.plugin.ExecutorMetrics;
import dev.overlap.executor.plugin.FatalErrorPolicy;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.apache.spark.TaskContext;
import org.apache.spark.util.TaskCompletionListener;

/**
 * One GPU task through the executor pipeline, whatever its input and output: its {@link TaskDriver}
 * behind the GPU's fence, finished when the task ends however it ends, and its figures recorded
 * into the job's report and the call's stage accumulators.
 */
public final class GpuTaskRun {
  private GpuTaskRun() {}

  /**
   * The task's batches through the executor pipeline, keeping up to {@code
   * spark.overlap.prefetch.batchesPerTask} in flight; its results in order.
   */
  static <H extends PackedBatch, R extends ResultBatch<T>, T> Iterator<T> drive(
      GpuRuntime gpu,
      OverlapConf job,
      TaskFigures figures,
      BatchStages<H, ?, ?, R> stages,
      BatchSource<HostMemoryBuffer, H> source,
      Consumer<TaskDriver.Figures> onFinish) {
    return drive(gpu, job, figures, stages, source, onFinish, h -> {});
  }

  /**
   * As above; {@code handedOn} is given what says how many input rows the results handed on so far
   * cover ({@link TaskDriver#handedOnInputRows}).
   */
  static <H extends PackedBatch, R extends ResultBatch<T>, T> Iterator<T> drive(
      GpuRuntime gpu,
      OverlapConf job,
      TaskFigures figures,
      BatchStages<H, ?, ?, R> stages,
      BatchSource<HostMemoryBuffer, H> source,
      Consumer<TaskDriver.Figures> onFinish,
      Consumer<LongSupplier> handedOn) {
    TaskContext ctx = TaskContext.get();
    GpuHealth health = gpu.health();
    // Until the task has ended, its thread may use the runtime's memory (staging buffers it packs,
    // pinned results it reads, cuDF's writer it closes): the executor's stop frees none of it
    // before then (GpuRuntime#close). Outside a Spark task nothing would end it: not counted.
    Runnable ended = ctx == null ? () -> {} : gpu.tasks().enter();
    TaskDriver<HostMemoryBuffer, H, R, T> driver;
    try {
      driver =
          new TaskDriver<>(
              gpu.pipeline(),
              gpu.staging(),
              FencedStages.of(stages, health),
              source,
              TaskTags.of(ctx),
              job.get(OverlapConf.PREFETCH_BATCHES_PER_TASK),
              f -> {
                ExecutorMetrics.gpuTaskEnded(f.bytes());
                if (figures != null) {
                  onFinish.accept(f);
                }
              },
              // A killed task's waits end even when Spark does not interrupt its thread; so do
              // they once the GPU is fenced (the staging buffers it holds never come back).
              () -> health.fenced() || (ctx != null && ctx.isInterrupted()));
    } catch (RuntimeException | Error e) {
      ended.run();
      throw e;
    }
    if (ctx != null) {
      // Runs on success, failure and kill alike, after the task's body: nothing of this task stays
      // in the pipeline, and its thread is done with the runtime.
      ctx.addTaskCompletionListener(
          (TaskCompletionListener)
              c -> {
                try {
                  driver.finish();
                } finally {
                  ended.run();
                }
              });
    }
    handedOn.accept(driver::handedOnInputRows);
    return FatalErrorPolicy.guard(driver, health);
  }

  /** The task's figures into the job's report and the call's stage accumulators. */
  static void record(
      TaskFigures figures, InputPath path, TaskDriver.Figures f, TaskOutput<?, ?> mode) {
    figures.addGpuTask(gpuTask(path, f, mode, f.rowsIn()));
  }

  /**
   * The GPU part of a task that went on on the CPU after a fatal GPU error: its work, its input
   * rows the {@code rowsIn} its handed-on results cover (the CPU counts the rest); not a GPU task.
   */
  static void recordFellBack(
      TaskFigures figures,
      InputPath path,
      TaskDriver.Figures f,
      TaskOutput<?, ?> mode,
      long rowsIn) {
    figures.addFellBack(gpuTask(path, f, mode, rowsIn));
  }

  private static JobReport.GpuTask gpuTask(
      InputPath path, TaskDriver.Figures f, TaskOutput<?, ?> mode, long rowsIn) {
    Map<PipelineStage, Long> nanos = new EnumMap<>(PipelineStage.class);
    nanos.put(PipelineStage.PACK, f.packNanos());
    f.busyNanos().forEach(nanos::put);
    return new JobReport.GpuTask(
        path,
        rowsIn,
        mode.rowsOut(f),
        f.batches(),
        f.bytes(),
        nanos,
        f.stagingWaitNanos(),
        f.resultWaitNanos(),
        path == InputPath.RAPIDS ? f.upstreamNanos() : 0);
  }

  /** A Parquet task's scan figures into the job's report and the call's stage accumulators. */
  static void recordScan(TaskFigures figures, ParquetSource source) {
    if (figures != null) {
      figures.addScan(
          new JobReport.ScanFigures(
              source.filesRead(),
              source.rowGroupsRead(),
              source.compressedBytesRead(),
              source.decodeNanos()));
    }
  }
}
