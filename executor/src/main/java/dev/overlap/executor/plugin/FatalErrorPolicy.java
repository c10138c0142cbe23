package dev.overlap.executor.plugin;

import dev.overlap.executor.config.GpuKeys;
import dev.overlap.executor.config.OnFatalError;
import dev.overlap.executor.gpu.GpuFencedException;
import dev.overlap.executor.gpu.GpuHealth;
import java.util.Iterator;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntConsumer;
import org.apache.spark.ExceptionFailure;
import org.apache.spark.TaskFailedReason;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the executor does once a fatal CUDA error has fenced its GPU ({@link GpuHealth}), per {@code
 * spark.overlap.gpu.onFatalError}: its GPU tasks fail saying so, and then either it exits so that
 * Spark starts a new executor ({@link OnFatalError#EXIT}, as the RAPIDS Accelerator does from its
 * {@code onTaskFailed}), or later tasks run as on an executor without a GPU ({@link
 * OnFatalError#CPU}). In local mode the executor is the driver: it never exits, and under EXIT too
 * its later tasks run as on an executor without a GPU.
 */
public final class FatalErrorPolicy {
  private static final Logger LOG = LoggerFactory.getLogger("dev.overlap");

  /** The executor's exit status after a fatal CUDA error; the RAPIDS Accelerator uses it too. */
  static final int EXIT_CODE = 20;

  /** How long {@link #exitJvm} lets shutdown hooks run before it halts the JVM. */
  static final long HALT_AFTER_MILLIS = 30_000;

  private final OnFatalError mode;
  private final boolean exits;
  private final IntConsumer exit;
  private final AtomicBoolean exited = new AtomicBoolean();

  /**
   * @param executorId Spark's id of this executor; {@code driver} in local mode, which never exits
   * @param exit ends the process with the status given ({@link #exitJvm} outside tests)
   */
  FatalErrorPolicy(OnFatalError mode, String executorId, IntConsumer exit) {
    this.mode = mode;
    this.exits = mode == OnFatalError.EXIT && !"driver".equals(executorId);
    this.exit = exit;
  }

  /** What follows a fatal error, in words: the end of the log line and of the tasks' message. */
  String plan() {
    String key = GpuKeys.ON_FATAL_ERROR.key() + "=" + mode;
    if (mode == OnFatalError.CPU) {
      return "the executor stays, and its later tasks run as on one without a GPU (" + key + ")";
    }
    return exits
        ? "the executor takes no more GPU work and exits (code "
            + EXIT_CODE
            + ") so that Spark starts a new one ("
            + key
            + ")"
        : "the executor is the driver (local mode), which does not exit: its later tasks run as on"
            + " one without a GPU; restart the application to use the GPU again ("
            + key
            + ")";
  }

  /**
   * A task of this executor failed: a fatal CUDA error in its failure fences the GPU; once the GPU
   * is fenced, the first failure under EXIT ends the process.
   */
  void taskFailed(GpuHealth health, TaskFailedReason reason) {
    if (reason instanceof ExceptionFailure ef && ef.exception().isDefined()) {
      health.check(ef.exception().get());
    }
    if (health.fenced() && exits && exited.compareAndSet(false, true)) {
      LOG.error(
          "Overlap: {}: exiting with code {} so that Spark starts a new executor",
          health.reason().orElseThrow(),
          EXIT_CODE);
      exit.accept(EXIT_CODE);
    }
  }

  /**
   * Before a task that wants the GPU goes the way of an executor without one: under EXIT a fenced
   * GPU fails it instead, on an executor that exits; under CPU, and in local mode, it goes that
   * way, as {@link ExecutorState#status} says.
   */
  public static void refuseIfFenced() {
    GpuHealth health = ExecutorState.health().orElse(null);
    OnFatalError mode = ExecutorState.conf().map(c -> c.get(GpuKeys.ON_FATAL_ERROR)).orElse(null);
    if (health != null
        && health.fenced()
        && mode == OnFatalError.EXIT
        && !"driver".equals(ExecutorState.executorId())) {
      throw new GpuFencedException(health.message(), null);
    }
  }

  /**
   * A GPU task's rows: once the GPU is fenced (by this failure or another), whatever fails the task
   * is reported as {@link GpuFencedException} saying so, with that failure as cause.
   */
  public static <T> Iterator<T> guard(Iterator<T> rows, GpuHealth health) {
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        try {
          return rows.hasNext();
        } catch (RuntimeException e) {
          throw fenced(e, health);
        }
      }

      @Override
      public T next() {
        try {
          return rows.next();
        } catch (RuntimeException e) {
          throw fenced(e, health);
        }
      }
    };
  }

  private static RuntimeException fenced(RuntimeException e, GpuHealth health) {
    health.check(e);
    if (!health.fenced() || e instanceof GpuFencedException) {
      return e;
    }
    return new GpuFencedException(health.message(), e);
  }

  /**
   * Exits the JVM with {@code code}; halts it if the shutdown hooks have not finished after {@link
   * #HALT_AFTER_MILLIS} (one may wait for the task thread that called this).
   */
  static void exitJvm(int code) {
    Thread halt =
        new Thread(
            () -> {
              try {
                Thread.sleep(HALT_AFTER_MILLIS);
              } catch (InterruptedException e) {
                return;
              }
              LOG.error("Overlap: shutdown hooks still running: halting the JVM");
              Runtime.getRuntime().halt(code);
            },
            "overlap-exit-halt");
    halt.setDaemon(true);
    halt.start();
    System.exit(code);
  }
}
