package dev.overlap.executor.pipeline;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of a {@link StagePipeline}'s three threads: takes batches from its queue in FIFO order, runs
 * its stage on each and hands it to the next thread. When stopped, it abandons what is left in its
 * queue itself, on this thread, before it ends.
 */
final class StageThread extends Thread {
  private static final Logger LOG = LoggerFactory.getLogger(StagePipeline.class);

  /** Queued behind the last batch when the pipeline closes; the thread that takes it ends. */
  private static final Batch<?> STOP = new Batch<>(null, -1, 0, null);

  private final BlockingQueue<Batch<?>> queue = new LinkedBlockingQueue<>();
  private final StagePipeline pipeline;
  private final Stage stage;
  private final Runnable threadInit;
  private final Consumer<Batch<?>> next;
  private volatile boolean stopping;
  private volatile Batch<?> running;

  StageThread(
      StagePipeline pipeline,
      String name,
      Stage stage,
      Runnable threadInit,
      Consumer<Batch<?>> next) {
    super(name);
    setDaemon(true);
    this.pipeline = pipeline;
    this.stage = stage;
    this.threadInit = threadInit;
    this.next = next;
  }

  void offer(Batch<?> b) {
    queue.add(b);
  }

  /** Tells the thread to end: it abandons its batches from now on, and is interrupted. */
  void requestStop() {
    stopping = true;
    queue.add(STOP);
    interrupt(); // wakes a stage blocked in an interruptible call
  }

  /**
   * Waits for the thread to end until {@code deadline} ({@link System#nanoTime}), logging what it
   * runs every {@code logEveryNanos}; past the deadline, logs its stack and returns.
   */
  void await(long deadline, long logEveryNanos) {
    long from = System.nanoTime();
    try {
      while (isAlive()) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          Throwable where = new Throwable(getName() + " is here");
          where.setStackTrace(getStackTrace());
          LOG.error(
              "{} is still in {} {} ms after the pipeline closed: left running, and what the"
                  + " stages use is not freed",
              getName(),
              doing(),
              millisSince(from),
              where);
          return;
        }
        TimeUnit.NANOSECONDS.timedJoin(this, Math.min(left, logEveryNanos));
        if (isAlive()) {
          LOG.warn(
              "{} is still in {} {} ms after the pipeline closed: waiting for it",
              getName(),
              doing(),
              millisSince(from));
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      LOG.error("interrupted while waiting for {} to end; it is left running", getName());
    }
  }

  private String doing() {
    Batch<?> b = running;
    return b == null
        ? "no stage"
        : stage.label() + " of " + b.lane().taskName() + " batch " + b.index();
  }

  private static long millisSince(long from) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - from);
  }

  boolean hasQueued() {
    return queue.stream().anyMatch(b -> b != STOP);
  }

  /** Abandons what is queued, on the calling thread, which must have run the thread init. */
  void drain() {
    for (Batch<?> b = queue.poll(); b != null; b = queue.poll()) {
      if (b != STOP) {
        b.abandon(closedCause());
      }
    }
  }

  private static IllegalStateException closedCause() {
    return new IllegalStateException("pipeline closed before the batch was done");
  }

  /** Runs {@code init} (when not null) on this thread, logging its failure. */
  static void runInit(Runnable init, String thread) {
    if (init != null) {
      try {
        init.run();
      } catch (RuntimeException e) {
        LOG.error("{}: thread setup failed; it runs without it", thread, e);
      }
    }
  }

  @Override
  public void run() {
    runInit(threadInit, getName());
    while (true) {
      Batch<?> b;
      try {
        b = queue.take();
      } catch (InterruptedException e) {
        if (stopping) {
          drain();
          return;
        }
        continue;
      }
      if (b == STOP) {
        drain();
        return;
      }
      if (stopping) {
        b.abandon(closedCause());
        continue;
      }
      if (!b.lane().isLive()) {
        b.abandon(null);
        continue;
      }
      runStage(b);
    }
  }

  private void runStage(Batch<?> b) {
    PipelineMetrics metrics = pipeline.metrics();
    StageListener l = pipeline.listener();
    long start = metrics.stageStarted();
    StagePipeline.started(l, stage, b.lane().tag(), b.index(), b.bytes(), start);
    running = b;
    TaskTag before = BatchTracker.enter(b.lane().tag());
    boolean ok = b.runStage(stage);
    BatchTracker.leave(before);
    running = null;
    long end = metrics.stageEnded();
    StagePipeline.ended(l, stage, b.lane().tag(), b.index(), b.bytes(), start, end, ok);
    long took = end - start;
    metrics.addBusy(stage, took);
    b.lane().addBusy(stage, took);
    if (!ok) {
      metrics.batchFailed();
    } else if (stopping) {
      // The next thread may have ended: the batch goes no further, and is freed here.
      b.abandon(closedCause());
    } else {
      next.accept(b);
    }
  }
}
