package dev.overlap.executor.pipeline;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor-wide pipeline: one upload thread, one compute thread and one download thread, each
 * taking batches from every task in FIFO order. While the compute thread runs batch {@code n}, the
 * upload thread is already copying batch {@code n+1} (of the same task or of another running task)
 * and the download thread is bringing back batch {@code n-1}.
 *
 * <p>Tasks reach it through a {@link TaskLane}. Bytes on the device are bounded by a {@link
 * DeviceBudget}; a failed stage fails only its own task's lane.
 *
 * <p>The pipeline knows nothing of CUDA: the stages are given per lane ({@link BatchStages}), so
 * plain Java stages test the scheduling and the cuDF binding plugs in the GPU work.
 */
public final class StagePipeline implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(StagePipeline.class);

  private final DeviceBudget budget;
  private final PipelineMetrics metrics = new PipelineMetrics();
  private final Worker uploader;
  private final Worker computer;
  private final Worker downloader;
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile StageListener listener;

  /** Queued behind the last batch when the pipeline closes; a worker that takes it exits. */
  private static final Batch<?> STOP = new Batch<>(null, -1, 0, null);

  /**
   * @param budget bytes in flight on the device
   * @param name prefix of the three threads' names
   * @param threadInit runs first on each of the three threads (the GPU binding selects the device
   *     there); may be null
   */
  public StagePipeline(DeviceBudget budget, String name, Runnable threadInit) {
    this.budget = budget;
    this.downloader =
        new Worker(name + "-download", Stage.DOWNLOAD, threadInit, this::afterDownload);
    this.computer = new Worker(name + "-compute", Stage.COMPUTE, threadInit, downloader::offer);
    this.uploader = new Worker(name + "-upload", Stage.UPLOAD, threadInit, computer::offer);
    downloader.start();
    computer.start();
    uploader.start();
  }

  public DeviceBudget budget() {
    return budget;
  }

  public PipelineMetrics metrics() {
    return metrics;
  }

  /** The listener told of every stage; null when none. */
  public StageListener listener() {
    return listener;
  }

  /** Sets the listener told of every stage from now on; null for none. */
  public void listener(StageListener l) {
    this.listener = l;
  }

  /**
   * Tells {@code l} (when not null) that a stage started; what it throws is logged, not thrown. For
   * the task threads' {@link Stage#PACK}, which runs outside the pipeline.
   */
  public static void started(
      StageListener l, Stage stage, TaskTag task, long batch, long bytes, long start) {
    if (l != null) {
      try {
        l.stageStarted(stage, task, batch, bytes, start);
      } catch (RuntimeException e) {
        LOG.warn("stage listener failed at the start of {}", stage, e);
      }
    }
  }

  /** Tells {@code l} (when not null) that a stage ended; what it throws is logged, not thrown. */
  public static void ended(
      StageListener l,
      Stage stage,
      TaskTag task,
      long batch,
      long bytes,
      long start,
      long end,
      boolean ok) {
    if (l != null) {
      try {
        l.stageEnded(stage, task, batch, bytes, start, end, ok);
      } catch (RuntimeException e) {
        LOG.warn("stage listener failed at the end of {}", stage, e);
      }
    }
  }

  /** Opens the lane one task submits its batches through. */
  public <
          H extends AutoCloseable,
          D extends AutoCloseable,
          O extends AutoCloseable,
          R extends AutoCloseable>
      TaskLane<H, R> openLane(String taskName, BatchStages<H, D, O, R> stages, int maxAhead) {
    return openLane(TaskTag.named(taskName), stages, maxAhead);
  }

  /** Opens the lane one task submits its batches through; listeners see the task as {@code tag}. */
  public <
          H extends AutoCloseable,
          D extends AutoCloseable,
          O extends AutoCloseable,
          R extends AutoCloseable>
      TaskLane<H, R> openLane(TaskTag tag, BatchStages<H, D, O, R> stages, int maxAhead) {
    if (closed.get()) {
      throw new IllegalStateException("pipeline is closed");
    }
    return new TaskLane<>(this, tag, stages, maxAhead);
  }

  void submit(Batch<?> batch) {
    if (closed.get()) {
      batch.abandon(new IllegalStateException("pipeline is closed"));
      return;
    }
    uploader.offer(batch);
  }

  private void afterDownload(Batch<?> batch) {
    batch.deliver();
  }

  /** Stops the threads after the batches already queued have drained or been abandoned. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      throw new IllegalStateException("pipeline already closed");
    }
    uploader.shutdown();
    computer.shutdown();
    downloader.shutdown();
  }

  /** One stage's thread. */
  private final class Worker extends Thread {
    private final BlockingQueue<Batch<?>> queue = new LinkedBlockingQueue<>();
    private final Stage stage;
    private final Runnable threadInit;
    private final Consumer<Batch<?>> next;
    private volatile boolean stopping;

    Worker(String name, Stage stage, Runnable threadInit, Consumer<Batch<?>> next) {
      super(name);
      setDaemon(true);
      this.stage = stage;
      this.threadInit = threadInit;
      this.next = next;
    }

    void offer(Batch<?> b) {
      queue.add(b);
    }

    void shutdown() {
      stopping = true;
      queue.add(STOP);
      interrupt(); // wakes a stage blocked in an interruptible call
      try {
        join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      Batch<?> b;
      while ((b = queue.poll()) != null) {
        if (b != STOP) {
          b.abandon(new IllegalStateException("pipeline closed before the batch ran"));
        }
      }
    }

    @Override
    public void run() {
      if (threadInit != null) {
        try {
          threadInit.run();
        } catch (RuntimeException e) {
          LOG.error("{}: thread setup failed; its stage runs without it", getName(), e);
        }
      }
      while (true) {
        Batch<?> b;
        try {
          b = queue.take();
        } catch (InterruptedException e) {
          if (stopping) {
            return;
          }
          continue;
        }
        if (b == STOP) {
          return;
        }
        if (stopping) {
          b.abandon(new IllegalStateException("pipeline closed before the batch ran"));
          continue;
        }
        if (!b.lane().isLive()) {
          b.abandon(null);
          continue;
        }
        StageListener l = listener;
        long start = metrics.stageStarted();
        started(l, stage, b.lane().tag(), b.index(), b.bytes(), start);
        boolean ok = b.runStage(stage);
        long end = metrics.stageEnded();
        ended(l, stage, b.lane().tag(), b.index(), b.bytes(), start, end, ok);
        long took = end - start;
        metrics.addBusy(stage, took);
        b.lane().addBusy(stage, took);
        if (ok) {
          next.accept(b);
        } else {
          metrics.batchFailed();
        }
      }
    }
  }

  void batchReleased(long bytes, boolean completed) {
    budget.release(bytes);
    if (completed) {
      metrics.batchDone(bytes);
    }
  }
}
