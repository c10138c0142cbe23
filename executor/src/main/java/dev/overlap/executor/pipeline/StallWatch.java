package dev.overlap.executor.pipeline;

import dev.overlap.executor.api.PipelineStage;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches a pipeline's stage threads, on a thread of its own, for a stage that runs on one batch
 * past a timeout: a copy, a decode, a kernel or a download that does not return. A native call
 * cannot be interrupted, so the stage is left running. The watch logs where its thread is, fails
 * the batch's task with {@link StageStallException} (the task's wait for that result ends at once),
 * then tells {@code onStall} (the GPU binding fences the GPU there, which ends every other task's
 * waits). Each stage run is reported once.
 */
final class StallWatch extends Thread {
  private static final Logger LOG = LoggerFactory.getLogger(StagePipeline.class);

  /** The longest pause between two looks at the threads. */
  private static final long MAX_PERIOD_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final List<StageThread> threads;
  private final long afterNanos;
  private final String bound;
  private final Consumer<StageStallException> onStall;
  private final CountDownLatch stopped = new CountDownLatch(1);
  // The runs already reported that were still running at the last look; this thread's alone.
  private final Set<StageThread.Run> reported = new HashSet<>();

  /**
   * @param after how long a stage may run on one batch
   * @param bound names the setting that bounds it, for the message ("some.key=10min")
   */
  StallWatch(
      String name,
      List<StageThread> threads,
      Duration after,
      String bound,
      Consumer<StageStallException> onStall) {
    super(name);
    if (after.isNegative() || after.isZero()) {
      throw new IllegalArgumentException("a stall timeout must be positive: " + after);
    }
    setDaemon(true);
    this.threads = threads;
    // Saturated: a timeout of centuries watches for nothing rather than failing the GPU's start.
    this.afterNanos = after.compareTo(Duration.ofDays(365)) > 0 ? Long.MAX_VALUE : after.toNanos();
    this.bound = bound;
    this.onStall = onStall;
  }

  @Override
  public void run() {
    long period =
        Math.max(TimeUnit.MILLISECONDS.toNanos(1), Math.min(afterNanos / 4, MAX_PERIOD_NANOS));
    try {
      while (!stopped.await(period, TimeUnit.NANOSECONDS)) {
        try {
          look(System.nanoTime());
        } catch (RuntimeException e) {
          LOG.error("{}: a look at the stage threads failed; watching on", getName(), e);
        }
      }
    } catch (InterruptedException e) {
      LOG.error("{} was interrupted: stalled stages are no longer watched", getName());
    }
  }

  /** Ends the watch; waits at most {@code millis} for its thread to end. */
  void finish(long millis) {
    stopped.countDown();
    try {
      join(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Reports each stage run that, by {@code now}, has run as long as the timeout or longer. */
  private void look(long now) {
    Set<StageThread.Run> running = new HashSet<>();
    for (StageThread t : threads) {
      StageThread.Run r = t.running();
      if (r == null) {
        continue;
      }
      running.add(r);
      long ran = now - r.startNanos();
      if (ran >= afterNanos && reported.add(r)) {
        stalled(t, r, ran);
      }
    }
    reported.retainAll(running);
  }

  private void stalled(StageThread t, StageThread.Run r, long ranNanos) {
    Batch<?> b = r.batch();
    PipelineStage stage = t.stage();
    StageStallException stall = new StageStallException(line(b, stage, ranNanos));
    Throwable where = new Throwable(t.getName() + " is here");
    where.setStackTrace(t.getStackTrace());
    LOG.error("{}; {} is left in it", stall.getMessage(), t.getName(), where);
    b.stalled(stage, stall);
    try {
      onStall.accept(stall);
    } catch (RuntimeException e) {
      LOG.error("the pipeline's stall handler failed", e);
    }
  }

  /**
   * The stall's one line: "TASK: batch 3 (file F) stalled in compute (Parquet decode): no end after
   * 600 s, past BOUND".
   */
  private String line(Batch<?> b, PipelineStage stage, long ranNanos) {
    String about = b.flow().about();
    String doing;
    try {
      doing = b.flow().stages().doing(stage);
    } catch (RuntimeException e) {
      doing = null; // only words for the message
    }
    return b.lane().taskName()
        + ": batch "
        + b.name()
        + (about.isEmpty() ? "" : " (" + about + ")")
        + " stalled in "
        + stage.label()
        + (doing == null ? "" : " (" + doing + ")")
        + ": no end after "
        + took(ranNanos)
        + ", past "
        + bound;
  }

  /** {@code 312 ms} under 10 s, {@code 600 s} from there. */
  static String took(long nanos) {
    long millis = TimeUnit.NANOSECONDS.toMillis(nanos);
    return millis < 10_000 ? millis + " ms" : millis / 1000 + " s";
  }
}
