package dev.overlap.executor.plugin;

import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.gpu.GpuHealth;
import dev.overlap.executor.gpu.GpuRuntime;
import dev.overlap.executor.trace.TraceRecorder;
import java.util.Optional;

/**
 * What the executor plugin set up in this JVM: the {@link GpuRuntime} when a GPU is usable, the
 * status the API reports, and the {@link TraceRecorder} when {@code spark.overlap.trace.dir} is
 * set. One executor per JVM (the driver's JVM in local mode).
 *
 * <p>The status is the one decided at start, but a GPU that a fatal CUDA error has fenced since
 * ({@link GpuHealth}) is reported as {@link GpuStatus.State#NO_GPU}, with the error as reason.
 */
public final class ExecutorState {
  private static volatile GpuStatus status =
      new GpuStatus(
          GpuStatus.State.NOT_STARTED,
          Optional.empty(),
          "the Overlap plugin is not running in this JVM: add"
              + " spark.plugins=dev.overlap.executor.OverlapPlugin");
  private static volatile GpuRuntime runtime;
  private static volatile GpuHealth health;
  private static volatile String executorId = "?";
  private static volatile OverlapConf conf;
  private static volatile TraceRecorder trace;

  private ExecutorState() {}

  public static GpuStatus status() {
    GpuStatus s = status;
    GpuHealth h = health;
    if (s.gpu() && h != null && h.fenced()) {
      return new GpuStatus(GpuStatus.State.NO_GPU, Optional.empty(), h.reason().orElseThrow());
    }
    return s;
  }

  /** The health of the GPU the executor set up; empty when it set none up. */
  public static Optional<GpuHealth> health() {
    return Optional.ofNullable(health);
  }

  /**
   * The GPU runtime, when the executor set one up: {@link #status} says GPU unless fenced since.
   */
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

  /**
   * The timeline's recorder, when the executor records one. The GPU path reaches it as its
   * pipeline's listener; the CPU path records each partition into it.
   */
  public static Optional<TraceRecorder> trace() {
    return Optional.ofNullable(trace);
  }

  /**
   * @param h the health of the GPU set up; null when none
   * @param t the timeline's recorder; null when none
   */
  static synchronized void started(
      String id, OverlapConf c, GpuStatus s, GpuRuntime r, GpuHealth h, TraceRecorder t) {
    executorId = id;
    conf = c;
    status = s;
    runtime = r;
    health = h;
    trace = t;
  }

  /** Clears the state and returns the runtime for the caller to close. */
  static synchronized GpuRuntime stopped() {
    GpuRuntime r = runtime;
    runtime = null;
    health = null;
    conf = null;
    trace = null;
    status =
        new GpuStatus(GpuStatus.State.NOT_STARTED, Optional.empty(), "the executor has shut down");
    return r;
  }
}
