package dev.overlap.executor.config;

import java.time.Duration;

/**
 * The keys under {@code spark.overlap.gpu.}: how the executor's GPU starts, and what follows when
 * it fails or stalls. Part of the one registry: {@link OverlapConf#ALL} lists them with the others.
 */
public final class GpuKeys {
  static final String PREFIX = OverlapConf.PREFIX + "gpu.";

  private GpuKeys() {}

  public static final ConfigEntry<Boolean> BACKGROUND_START =
      ConfigEntry.builder(PREFIX + "backgroundStart")
          .doc(
              "Set the GPU up on a thread of its own while Spark starts the session and the"
                  + " driver plans: loading cuDF's native libraries, the memory pools, the staging"
                  + " buffers and the pipeline's threads (seconds in all). A task waits for it only"
                  + " when it needs to know whether there is a GPU. false sets it up in the"
                  + " executor plugin's init, before the executor takes tasks.")
          .startupOnly()
          .booleanConf(true);

  public static final ConfigEntry<OnFatalError> ON_FATAL_ERROR =
      ConfigEntry.builder(PREFIX + "onFatalError")
          .doc(
              "After a fatal CUDA error (cuDF's CudaFatalException: an illegal address, a launch"
                  + " failure...) or a stall, which leave the GPU unusable until the process ends,"
                  + " the GPU is fenced: nothing more runs on it, GpuStatus reports no GPU. A"
                  + " running Parquet partition of GpuPartitions.map goes on in the same task on"
                  + " the kernel's CPU implementation, from the first input row whose results it"
                  + " had not handed on (unless spark.overlap.noGpu.mode=FAIL, the kernel has none,"
                  + " or those rows are not known: a batch split, a Delta table's deleted rows);"
                  + " other running GPU tasks fail saying so. The file whose decode faulted is read"
                  + " on the host by every scan planned afterwards, and by a retried task or a"
                  + " later stage's of a scan planned before (they ask the driver). EXIT then"
                  + " exits the executor (code 20) on a task failure, as the"
                  + " RAPIDS Accelerator does, so that Spark starts a new one (in local mode the"
                  + " executor is the driver: it stays, and its later tasks run as under CPU); CPU"
                  + " keeps the executor and runs later tasks as one without a GPU does"
                  + " (spark.overlap.noGpu.mode applies).")
          .startupOnly()
          .enumConf(OnFatalError.class, OnFatalError.EXIT);

  public static final ConfigEntry<Duration> STALL_TIMEOUT =
      ConfigEntry.builder(PREFIX + "stallTimeout")
          .doc(
              "How long one stage of one batch (its copy to the GPU, Parquet decode, kernel, copy"
                  + " back or Parquet encode) may run before it counts as stalled. A CUDA call that"
                  + " does not return cannot be interrupted: the batch's task fails with one line"
                  + " naming the stage, the batch and its files, and the GPU is fenced as after a"
                  + " fatal CUDA error (spark.overlap.gpu.onFatalError). Healthy stages take"
                  + " seconds, a first call that loads cuDF's kernels included.")
          .startupOnly()
          .durationConf("10min", Duration.ofMillis(1));

  /** The stall timeout as a stall's line names it: {@code spark.overlap.gpu.stallTimeout=10min}. */
  public static String stallBound(OverlapConf conf) {
    return STALL_TIMEOUT.key() + "=" + DurationText.format(conf.get(STALL_TIMEOUT));
  }
}
