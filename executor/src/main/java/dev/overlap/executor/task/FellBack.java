package dev.overlap.executor.task;

import dev.overlap.executor.api.InputPath;
import dev.overlap.executor.gpu.FaultedFiles;
import dev.overlap.executor.input.parquet.FilePlan;
import dev.overlap.executor.output.TaskOutput;
import dev.overlap.executor.pipeline.TaskDriver;
import java.util.List;
import java.util.Map;

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

  /**
   * @param figures where the task's figures go; null for nowhere
   * @param plans the task's files, as planned for the GPU
   */
  FellBack(TaskFigures figures, List<FilePlan> plans) {
    this.figures = figures;
    this.plans = plans;
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
   * The GPU part's figures, when its pipeline run ends: at the task's end, after a fall back, since
   * a partition's GPU run cannot end before its last result was taken.
   */
  void gpuEnded(InputPath path, TaskDriver.Figures f, TaskOutput<?, ?> mode) {
    long cpuFrom = from;
    if (cpuFrom < 0) {
      GpuTaskRun.record(figures, path, f, mode);
    } else {
      GpuTaskRun.recordFellBack(figures, path, f, mode, cpuFrom);
    }
  }
}
