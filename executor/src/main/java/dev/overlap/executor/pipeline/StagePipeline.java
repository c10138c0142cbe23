package dev.overlap.executor.pipeline;

import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.resource.TaskTag;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor-wide pipeline: one upload thread, one or more compute threads and one or more
 * download threads, each taking batches in FIFO order. While a compute thread runs batch {@code n},
 * the upload thread is already copying batch {@code n+1} (of the same task or of another running
 * task) and a download thread is bringing back batch {@code n-1}.
 *
 * <p>Compute and download threads: each task's lane is given one of each when it opens (the one
 * serving the fewest open lanes), and all its batches go through those threads, so a task's batches
 * are computed and come back in its order. Several compute threads let the kernels of different
 * tasks run at once, each thread on its own stream (the GPU binding runs kernels on the thread's
 * per-thread default stream). Several download threads let the download stages of different tasks
 * run at once: a result encoded on the device before it comes back (Parquet) keeps a thread busy
 * for much longer than the copy alone.
 *
 * <p>Tasks reach it through a {@link TaskLane}. Bytes on the device are bounded by a {@link
 * DeviceBudget}; a failed stage fails only its own task's lane.
 *
 * <p>The pipeline knows nothing of CUDA: the stages are given per lane ({@link BatchStages}), so
 * plain Java stages test the scheduling and the cuDF binding plugs in the GPU work.
 *
 * <p>Closing: {@link #close} interrupts the threads and waits for each to end. A thread ends after
 * closing, on itself, the batches still in its queue: they are freed on a thread that ran the
 * thread init (the GPU binding's device selection). A stage that ignores the interrupt (a CUDA
 * call) is waited for, with a line logged every {@code logEvery} naming the thread, stage, task and
 * batch; past {@code giveUpAfter} close gives up, logs the thread's stack and returns with {@link
 * #threadsEnded} false. The owner must then free nothing the stages may use (streams, buffers,
 * memory pools): a leak until the process exits rather than memory freed under a running call. The
 * stuck thread, if it ever returns, abandons its batch and its queue itself.
 */
public final class StagePipeline implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(StagePipeline.class);

  /** How often {@link #close} logs a stage still running, unless told otherwise. */
  public static final Duration CLOSE_LOG_EVERY = Duration.ofSeconds(10);

  /** How long {@link #close} waits for a stage still running, unless told otherwise. */
  public static final Duration CLOSE_GIVE_UP = Duration.ofMinutes(2);

  private final DeviceBudget budget;
  private final PipelineMetrics metrics = new PipelineMetrics();
  private final PipelineThreads threads;
  private final AtomicBoolean closed = new AtomicBoolean();
  // Held while submit hands a batch to the upload thread and while close marks the pipeline
  // closed: once close has begun, no batch enters a queue whose thread may have ended.
  private final Object admission = new Object();
  // Test seam: runs in submit between its check that the pipeline is open and the queuing.
  private volatile Runnable admitting = () -> {};
  private volatile StageListener listener;

  /**
   * @param budget bytes in flight on the device
   * @param name prefix of the threads' names
   * @param threadInit runs first on each of the threads (the GPU binding selects the device there);
   *     may be null
   */
  public StagePipeline(DeviceBudget budget, String name, Runnable threadInit) {
    this(budget, name, threadInit, 1);
  }

  /**
   * As above, with {@code downloadThreads} download threads.
   *
   * @param downloadThreads at least 1
   */
  public StagePipeline(DeviceBudget budget, String name, Runnable threadInit, int downloadThreads) {
    this(budget, new Threads(name, threadInit, 1, downloadThreads, CLOSE_LOG_EVERY, CLOSE_GIVE_UP));
  }

  /**
   * The pipeline's threads: their names start with {@code name}; {@code threadInit} runs first on
   * each (may be null); {@link #close} logs a stage still running every {@code logEvery} and gives
   * up waiting for it after {@code giveUpAfter}.
   *
   * @param computeThreads at least 1
   * @param downloadThreads at least 1
   */
  public record Threads(
      String name,
      Runnable threadInit,
      int computeThreads,
      int downloadThreads,
      Duration logEvery,
      Duration giveUpAfter) {
    public Threads {
      if (computeThreads < 1) {
        throw new IllegalArgumentException("computeThreads must be at least 1: " + computeThreads);
      }
      if (downloadThreads < 1) {
        throw new IllegalArgumentException(
            "downloadThreads must be at least 1: " + downloadThreads);
      }
    }
  }

  /**
   * A pipeline with {@code threads}. When a thread fails to start, the ones started before it are
   * stopped and waited for (as by {@link #close}) before the failure propagates.
   */
  public StagePipeline(DeviceBudget budget, Threads threads) {
    this(budget, threads, Thread::start);
  }

  /** As above; each thread is started with {@code start} (a test fails one). */
  StagePipeline(DeviceBudget budget, Threads threads, Consumer<Thread> start) {
    this.budget = budget;
    this.threads = new PipelineThreads(this, threads, start);
  }

  /** Number of compute threads. */
  public int computeThreads() {
    return threads.computeThreads();
  }

  /** Number of download threads. */
  public int downloadThreads() {
    return threads.downloadThreads();
  }

  /** The compute thread of a lane that opens: the one serving the fewest open lanes. */
  int nextComputer() {
    return threads.nextComputer();
  }

  /** The download thread of a lane that opens: the one serving the fewest open lanes. */
  int nextDownloader() {
    return threads.nextDownloader();
  }

  /**
   * A lane served by compute thread {@code computer} and download thread {@code downloader} closed.
   */
  void laneClosed(int computer, int downloader) {
    threads.laneClosed(computer, downloader);
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
   * the task threads' {@link PipelineStage#PACK}, which runs outside the pipeline.
   */
  public static void started(StageListener l, StageRun run) {
    if (l != null) {
      try {
        l.stageStarted(run);
      } catch (RuntimeException e) {
        LOG.warn("stage listener failed at the start of {}", run.stage(), e);
      }
    }
  }

  /** Tells {@code l} (when not null) that a stage ended; what it throws is logged, not thrown. */
  public static void ended(StageListener l, StageRun run, long end, boolean ok) {
    if (l != null) {
      try {
        l.stageEnded(run, end, ok);
      } catch (RuntimeException e) {
        LOG.warn("stage listener failed at the end of {}", run.stage(), e);
      }
    }
  }

  /**
   * From now on, a stage that runs on one batch longer than {@code after} is a stall: a watch
   * thread ({@link StallWatch}) logs where the stage's thread is, fails the batch's task with
   * {@link StageStallException}, its one line naming the task, the batch and what it reads, the
   * stage and {@code bound}, then tells {@code onStall} (the GPU binding fences the GPU there). The
   * stage itself is left running (a native call cannot be interrupted); should it return, its batch
   * is dropped then. Other tasks' batches are the owner's to stop ({@code onStall}).
   *
   * @param bound the setting that bounds a stage, as the message names it ("key=10min")
   * @throws IllegalStateException when stalls are already watched, or the pipeline is closed
   */
  public void watchStalls(Duration after, String bound, Consumer<StageStallException> onStall) {
    synchronized (admission) {
      if (closed.get()) {
        throw new IllegalStateException("pipeline is closed");
      }
      threads.watch(after, bound, onStall);
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

  /**
   * Hands {@code batch} to the upload thread. Once {@link #close} has begun (and when it races this
   * call), the batch is not run: it is abandoned here or by the thread, which closes what it holds,
   * gives back its budget bytes and fails its result with {@link IllegalStateException} (the task's
   * {@link TaskLane#next} throws {@link PipelineTaskException}). Never left in a queue whose thread
   * ended.
   */
  void submit(Batch<?> batch) {
    synchronized (admission) {
      if (!closed.get()) {
        admitting.run();
        threads.upload(batch);
        return;
      }
    }
    batch.abandon(new IllegalStateException("pipeline is closed"));
  }

  /** Test seam: {@code hook} runs in {@link #submit} once it found the pipeline open. */
  void admitting(Runnable hook) {
    this.admitting = hook;
  }

  /**
   * Stops the threads: batches not yet done are abandoned, a running stage is interrupted and
   * waited for (see the class comment for one that does not end).
   */
  @Override
  public void close() {
    synchronized (admission) {
      if (!closed.compareAndSet(false, true)) {
        throw new IllegalStateException("pipeline already closed");
      }
    }
    threads.stop();
  }

  /**
   * True once {@link #close} has returned with every thread ended: nothing the stages use is in use
   * any more, and it may be freed.
   */
  public boolean threadsEnded() {
    return closed.get() && threads.ended();
  }

  /**
   * A batch left the pipeline: {@code held} bytes of the budget come back ({@code bytes} its own,
   * the rest its kernel output's).
   */
  void batchReleased(long held, long bytes, boolean completed) {
    budget.release(held);
    if (completed) {
      metrics.batchDone(bytes);
    }
  }

  /**
   * After a device allocation failed in {@code stage}: waits until the batches ahead of {@code b}
   * in the later stages are done (see {@link PipelineThreads#drainAfter}).
   *
   * @return false when the pipeline closes or {@code b}'s task ends first
   */
  boolean drainAfter(PipelineStage stage, Batch<?> b) {
    return threads.drainAfter(stage, b, closed::get);
  }
}
