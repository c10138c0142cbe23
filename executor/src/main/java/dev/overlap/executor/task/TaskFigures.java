package dev.overlap.executor.task;

import java.io.Serializable;

/**
 * Where a task's figures go when it ends, on the executor: the job's {@link JobReport} when the
 * caller passed one, and always the call's {@link StageAccumulators}, so that the stage page and
 * the report are fed from the same per-task figures.
 */
interface TaskFigures extends Serializable {
  /** One task that ran on the GPU. */
  void addGpuTask(JobReport.GpuTask t);

  /** What a task that decoded Parquet on the GPU read. */
  void addScan(JobReport.ScanFigures f);

  /** One task that ran the kernel's CPU implementation. */
  void addCpuTask(long rowsIn, long rowsOut, long kernelNanos);

  /**
   * The GPU's part of a task that began on the GPU and went on on the kernel's CPU implementation
   * after a fatal GPU error ({@link FaultFallback}): its work, its rows those it handed on. The
   * task itself is counted once, by {@link #addCpuTask}, as what it ended as; here as one that fell
   * back.
   */
  void addFellBack(JobReport.GpuTask gpuPart);

  /**
   * A file whose decode failed fatally on a GPU, with the fault ({@link
   * dev.overlap.executor.gpu.FaultedFiles}): told by a task that met it, or that read the file on
   * the host because of it. Each is kept once however many tasks tell it.
   */
  void addFault(String fault);

  /** Both sinks, either of which may be null; null when both are. */
  static TaskFigures of(TaskFigures a, TaskFigures b) {
    if (a == null || b == null) {
      return a == null ? b : a;
    }
    return new Both(a, b);
  }

  /** Two sinks, told in turn. */
  record Both(TaskFigures a, TaskFigures b) implements TaskFigures {
    @Override
    public void addGpuTask(JobReport.GpuTask t) {
      a.addGpuTask(t);
      b.addGpuTask(t);
    }

    @Override
    public void addScan(JobReport.ScanFigures f) {
      a.addScan(f);
      b.addScan(f);
    }

    @Override
    public void addCpuTask(long rowsIn, long rowsOut, long kernelNanos) {
      a.addCpuTask(rowsIn, rowsOut, kernelNanos);
      b.addCpuTask(rowsIn, rowsOut, kernelNanos);
    }

    @Override
    public void addFellBack(JobReport.GpuTask gpuPart) {
      a.addFellBack(gpuPart);
      b.addFellBack(gpuPart);
    }

    @Override
    public void addFault(String fault) {
      a.addFault(fault);
      b.addFault(fault);
    }
  }
}
