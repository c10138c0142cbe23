package dev.overlap.executor.task;

import dev.overlap.executor.api.InputPath;
import dev.overlap.executor.gpu.FaultedFiles;
import dev.overlap.executor.input.parquet.FilePlan;
import dev.overlap.executor.output.TaskOutput;
import dev.overlap.executor.pipeline.TaskDriver;
import java.util.List;
import java.util.Map;
import org.apache.spark.TaskContext;
import org.apache.spark.util.TaskCompletionListener;

/**
 * What one Parquet task on the GPU tells its figures should it go on on the CPU after a fatal GPU
 * error ({@link FaultFallback}): the file among its own whose decode faulted, and the task once, as
 * the CPU task it ended as, with the work and the handed-on rows of its GPU part. A task that did
 * not fall back is a GPU task as any other.
 */
final class FellBack {
  private final TaskFigures figures;
  private final List<FilePlan> plans;
  // The input row the CPU went on from; -1 while the task is on the GPU.
  private volatile long from = -1;
  // Whether the GPU part's figures wait for the task's end; what waits; whether it has ended.
  private final boolean deferred;
  private Runnable pending;
  private boolean flushed;

  /**
   * @param figures where the task's figures go; null for nowhere
   * @param plans the task's files, as planned for the GPU
   */
  FellBack(TaskFigures figures, List<FilePlan> plans) {
    this.figures = figures;
    this.plans = plans;
    TaskContext ctx = TaskContext.get();
    this.deferred = ctx != null;
    if (ctx != null) {
      // Registered before the task's pipeline run registers its own, so it runs after it: Spark
      // runs completion listeners in the reverse order of their registration.
      ctx.addTaskCompletionListener((TaskCompletionListener) c -> flush());
    }
  }

  /** The task goes on on the CPU from input row {@code from}; names its files that faulted. */
  void from(long from) {
    this.from = from;
    if (figures == null) {
      return;
    }
    // The process records only its first fault: a task that met another's fence names nothing.
    for (FilePlan p : plans) {
      String fault = FaultedFiles.why(p.split().identity(), Map.of());
      if (fault != null) {
        figures.addFault(fault);
      }
    }
  }

  /**
   * The GPU part's figures, when its pipeline run ends. A run that fails ends before the fall back
   * it causes (the task's pipeline closes as the failure leaves it): in a Spark task they are kept
   * until the task ends, and recorded then as what the task ended as.
   */
  void gpuEnded(InputPath path, TaskDriver.Figures f, TaskOutput<?, ?> mode) {
    synchronized (this) {
      if (!flushed && deferred) {
        pending = () -> recordGpu(path, f, mode);
        return;
      }
    }
    recordGpu(path, f, mode);
  }

  private void recordGpu(InputPath path, TaskDriver.Figures f, TaskOutput<?, ?> mode) {
    long cpuFrom = from;
    if (cpuFrom < 0) {
      GpuTaskRun.record(figures, path, f, mode);
    } else {
      GpuTaskRun.recordFellBack(figures, path, f, mode, cpuFrom);
    }
  }

  /** At the task's end: records the GPU part's figures kept until then. */
  private void flush() {
    Runnable r;
    synchronized (this) {
      flushed = true;
      r = pending;
      pending = null;
    }
    if (r != null) {
      r.run();
    }
  }
}
