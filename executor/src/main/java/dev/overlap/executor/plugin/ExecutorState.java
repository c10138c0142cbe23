package dev.overlap.executor.plugin;

import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.gpu.GpuHealth;
import dev.overlap.executor.gpu.GpuRuntime;
import dev.overlap.executor.trace.TraceRecorder;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;

/**
 * What the executor plugin set up in this JVM: the {@link GpuRuntime} when a GPU is usable, the
 * status the API reports, and the {@link TraceRecorder} when {@code spark.overlap.trace.dir} is
 * set. One executor per JVM (the driver's JVM in local mode).
 *
 * <p>The status is the one decided at start, but a GPU that a fatal CUDA error has fenced since
 * ({@link GpuHealth}) is reported as {@link GpuStatus.State#NO_GPU}, with the error as reason.
 *
 * <p>The GPU starts on a thread of its own ({@code spark.overlap.gpu.backgroundStart}): between
 * {@link #starting} and {@link #started}, every getter but {@link #executorId} and {@link
 * #runtimeIfStarted} waits for the start to end, so a task decides GPU or CPU on what the start
 * found.
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
  // Counted down when the start that began ends; a latch already at zero when none runs.
  private static volatile CountDownLatch start = new CountDownLatch(0);
  private static volatile String startedOn;

  /** How long {@link #stopped} waits for a start still running. */
  static final long STOP_WAIT_MILLIS = 120_000;

  private ExecutorState() {}

  public static GpuStatus status() {
    awaitStart();
    GpuStatus s = status;
    GpuHealth h = health;
    if (s.gpu() && h != null && h.fenced()) {
      return new GpuStatus(GpuStatus.State.NO_GPU, Optional.empty(), h.reason().orElseThrow());
    }
    return s;
  }

  /** The health of the GPU the executor set up; empty when it set none up. */
  public static Optional<GpuHealth> health() {
    awaitStart();
    return Optional.ofNullable(health);
  }

  /**
   * The GPU runtime, when the executor set one up: {@link #status} says GPU unless fenced since.
   */
  public static Optional<GpuRuntime> runtime() {
    awaitStart();
    return Optional.ofNullable(runtime);
  }

  /** The GPU runtime if the start has ended and set one up; never waits (for metrics). */
  public static Optional<GpuRuntime> runtimeIfStarted() {
    return Optional.ofNullable(runtime);
  }

  /** The configuration the executor started with; empty when the plugin is not running. */
  public static Optional<OverlapConf> conf() {
    awaitStart();
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
    awaitStart();
    return Optional.ofNullable(trace);
  }

  /**
   * Executor {@code id}'s GPU start began on a thread of its own: the getters but {@link
   * #executorId} and {@link #runtimeIfStarted} wait for {@link #started}.
   */
  static synchronized void starting(String id) {
    executorId = id;
    start = new CountDownLatch(1);
  }

  /**
   * The start ended: the executor's state from now on; the getters waiting return.
   *
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
    startedOn = Thread.currentThread().getName();
    start.countDown();
  }

  /** The thread that published the last start: for tests. */
  static String startedOn() {
    return startedOn;
  }

  /**
   * Waits for a start still running. An interrupt does not end the wait, which lasts seconds at
   * most: it is kept for the caller to see.
   */
  private static void awaitStart() {
    CountDownLatch l = start;
    if (l.getCount() == 0) {
      return;
    }
    boolean interrupted = false;
    while (true) {
      try {
        l.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Waits (at most {@link #STOP_WAIT_MILLIS}, and not past an interrupt) for a start still running,
   * clears the state and returns the runtime for the caller to close: null when the start had not
   * ended, whose runtime then stays unclosed.
   */
  static GpuRuntime stopped() {
    CountDownLatch l = start;
    boolean ended;
    try {
      ended = l.await(STOP_WAIT_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      ended = false;
    }
    GpuRuntime r = clear();
    return ended ? r : null;
  }

  private static synchronized GpuRuntime clear() {
    // Whoever still waits for a start that did not end goes on, and sees the executor shut down.
    CountDownLatch waited = start;
    start = new CountDownLatch(0);
    waited.countDown();
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
