package dev.overlap.executor.pipeline;

import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.resource.BatchTracker;
import dev.overlap.executor.resource.TaskTag;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of a {@link StagePipeline}'s threads: takes batches from its queue in FIFO order, runs its
 * stage on each and hands it to the next thread. When stopped, it abandons what is left in its
 * queue itself, on this thread, before it ends.
 */
final class StageThread extends Thread {
  private static final Logger LOG = LoggerFactory.getLogger(StagePipeline.class);

  /** Queued behind the last batch when the pipeline closes; the thread that takes it ends. */
  private static final Batch<?> STOP = new Batch<>(null, -1, 0, null, null);

  private final BlockingQueue<Batch<?>> queue = new LinkedBlockingQueue<>();
  private final StagePipeline pipeline;
  private final PipelineStage stage;
  private final Runnable threadInit;
  private final Consumer<Batch<?>> next;
  private volatile boolean stopping;
  private volatile Run running;
  // Batches ever offered here, and ever gone on from here (passed on, failed or dropped): the
  // difference is queued or running.
  private final AtomicLong offered = new AtomicLong();
  private final AtomicLong gone = new AtomicLong();

  StageThread(
      StagePipeline pipeline,
      String name,
      PipelineStage stage,
      Runnable threadInit,
      Consumer<Batch<?>> next) {
    super(name);
    setDaemon(true);
    this.pipeline = pipeline;
    this.stage = stage;
    this.threadInit = threadInit;
    this.next = next;
  }

  /** A stage running on {@code batch} since {@code startNanos} ({@link System#nanoTime}). */
  record Run(Batch<?> batch, long startNanos) {}

  /** The stage this thread runs. */
  PipelineStage stage() {
    return stage;
  }

  /** What this thread runs now; null between batches. */
  Run running() {
    return running;
  }

  void offer(Batch<?> b) {
    offered.incrementAndGet();
    queue.add(b);
  }

  /** How many batches were offered here so far: a mark for {@link #past}. */
  long mark() {
    return offered.get();
  }

  /** Whether as many batches have gone on from here as had been offered at {@code mark}. */
  boolean past(long mark) {
    return gone.get() >= mark;
  }

  /** Whether a batch is queued here or running (counted until it is passed on). */
  boolean busy() {
    return gone.get() < offered.get();
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
    Run r = running;
    return r == null
        ? "no stage"
        : stage.label() + " of " + r.batch().lane().taskName() + " batch " + r.batch().index();
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
        gone.incrementAndGet();
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
      try {
        runStage(b);
      } finally {
        gone.incrementAndGet();
      }
    }
  }

  /**
   * Runs the stage on {@code b} and hands it on, or drops it when its task or the pipeline ended.
   */
  private void runStage(Batch<?> b) {
    if (stopping) {
      b.abandon(closedCause());
      return;
    }
    if (!b.lane().isLive(b)) {
      b.abandon(null);
      return;
    }
    PipelineMetrics metrics = pipeline.metrics();
    StageListener l = pipeline.listener();
    long start = metrics.stageStarted(stage);
    StageRun run = new StageRun(stage, b.lane().tag(), b.index(), b.bytes(), start);
    StagePipeline.started(l, run);
    running = new Run(b, start);
    TaskTag before = BatchTracker.enter(b.lane().tag());
    Batch.Outcome outcome = b.runStage(stage);
    BatchTracker.leave(before);
    running = null;
    long end = metrics.stageEnded(stage);
    boolean ok = outcome == Batch.Outcome.DONE;
    StagePipeline.ended(l, run, end, ok);
    long took = end - start;
    metrics.addBusy(stage, took);
    b.lane().addBusy(stage, took);
    switch (outcome) {
      case FAILED -> metrics.batchFailed();
      case OUT_OF_MEMORY -> outOfMemory(b);
      default -> {
        if (stopping) {
          // The next thread may have ended: the batch goes no further, and is freed here.
          b.abandon(closedCause());
        } else {
          next.accept(b);
        }
      }
    }
  }

  /**
   * A device allocation of {@code b}'s stage failed: the first time, runs the stage again once the
   * batches ahead are done; the second, splits the batch and runs its parts in order (each under
   * the same rule); a batch that cannot be split fails its task with one line.
   */
  private void outOfMemory(Batch<?> b) {
    PipelineMetrics metrics = pipeline.metrics();
    String task = b.lane().taskName();
    if (b.retry()) {
      LOG.info(
          "{}: batch {} ran out of device memory in {} ({}); running it again once the batches"
              + " ahead are done",
          task,
          b.name(),
          stage.label(),
          b.outOfMemory());
      metrics.batchRetried();
      if (pipeline.drainAfter(stage, b)) {
        runStage(b);
      } else {
        b.abandon(stopping ? closedCause() : null);
      }
      return;
    }
    List<? extends Batch<?>> parts;
    TaskTag before = BatchTracker.enter(b.lane().tag());
    try {
      parts = b.split(stage);
    } finally {
      BatchTracker.leave(before);
    }
    if (parts.isEmpty()) {
      b.failOutOfMemory(stage, outOfMemoryLine(b));
      metrics.batchFailed();
      return;
    }
    LOG.info(
        "{}: batch {} ran out of device memory in {} again; split into {} parts",
        task,
        b.name(),
        stage.label(),
        parts.size());
    metrics.batchSplit();
    for (Batch<?> p : parts) {
      runStage(p);
    }
  }

  /**
   * The one line of a batch that does not fit in device memory and cannot be split: what asked and
   * how much (the stages' words), the budget, and the device's free memory.
   */
  private String outOfMemoryLine(Batch<?> b) {
    long free = b.flow().stages().freeDeviceBytes();
    return String.format(
        "out of device memory: %s, for batch %s of %s, which cannot be split further; device"
            + " budget %d bytes (%d in flight); device free %s",
        b.outOfMemory(),
        b.name(),
        b.lane().taskName(),
        pipeline.budget().maxBytes(),
        pipeline.budget().inFlight(),
        free < 0 ? "unknown" : free + " bytes");
  }
}
