package dev.overlap.executor.spark;

import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.device.GpuRuntime;
import java.util.Optional;

/**
 * What the executor plugin set up in this JVM: the {@link GpuRuntime} when a GPU is usable, and the
 * status the API reports. One executor per JVM (the driver's JVM in local mode).
 */
public final class ExecutorState {
  private static volatile GpuStatus status =
      new GpuStatus(
          GpuStatus.State.NOT_STARTED,
          Optional.empty(),
          "the Overlap plugin is not running in this JVM: add"
              + " spark.plugins=dev.overlap.executor.OverlapPlugin");
  private static volatile GpuRuntime runtime;
  private static volatile String executorId = "?";
  private static volatile OverlapConf conf;

  private ExecutorState() {}

  public static GpuStatus status() {
    return status;
  }

  /** The GPU runtime, when {@link #status} says GPU. */
  public static Optional<GpuRuntime> runtime() {
    return Optional.ofNullable(runtime);
  }

  /** The configuration the executor started with; empty when the plugin is not running. */
  public static Optional<OverlapConf> conf() {
    return Optional.ofNullable(conf);
  }

  public static String executorId() {
    return executorId;
  }

  static synchronized void started(String id, OverlapConf c, GpuStatus s, GpuRuntime r) {
    executorId = id;
    conf = c;
    status = s;
    runtime = r;
  }

  /** Clears the state and returns the runtime for the caller to close. */
  static synchronized GpuRuntime stopped() {
    GpuRuntime r = runtime;
    runtime = null;
    conf = null;
    status =
        new GpuStatus(GpuStatus.State.NOT_STARTED, Optional.empty(), "the executor has shut down");
    return r;
  }
}
