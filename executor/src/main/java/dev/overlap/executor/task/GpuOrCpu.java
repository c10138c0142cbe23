package dev.overlap.executor.task;

import dev.overlap.executor.api.GpuKernel;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.config.NoGpuMode;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.plugin.ExecutorState;
import dev.overlap.executor.plugin.FatalErrorPolicy;

/**
 * Whether a task runs on the GPU or through the kernel's CPU implementation: the GPU when the
 * executor has a usable one and the job allows it; the CPU implementation otherwise, unless the job
 * forbids it or the kernel has none, which fails the task saying what to set.
 */
public final class GpuOrCpu {
  private GpuOrCpu() {}

  static boolean useGpu(GpuKernel kernel, OverlapConf job) {
    GpuStatus status = ExecutorState.status();
    boolean enabled = job.get(OverlapConf.ENABLED);
    if (status.gpu() && enabled) {
      return true;
    }
    if (enabled) {
      FatalErrorPolicy.refuseIfFenced();
    }
    String reason = enabled ? status.reason() : OverlapConf.ENABLED.key() + "=false for this job";
    if (job.get(OverlapConf.NO_GPU_MODE) == NoGpuMode.FAIL || kernel.cpu() == null) {
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
}
