package dev.overlap.executor.pipeline;

import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.resource.TaskTag;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * One task's way into the executor-wide {@link StagePipeline}. The task {@link #submit submits}
 * packed host batches and {@link #next takes} results back in submission order; a batch the
 * pipeline split after running out of device memory gives one result per part, in row order.
 *
 * <p>Threading: a lane belongs to one task, whose thread calls it, but {@code close} may also come
 * from Spark's task completion callback on another thread.
 *
 * <p>Failure: when a stage throws for one of this lane's batches, that batch's {@link #next} throws
 * {@link PipelineTaskException} with the stage's exception as cause, later batches of the lane are
 * dropped, and other lanes carry on. {@link #close} (task end, success or not) drops everything the
 * lane still has in the pipeline and releases its device bytes.
 *
 * @param <H> the packed host batch the task submits; the lane owns it from {@code submit} on
 * @param <R> the host result the task takes; the task owns it once {@code next} returns it
 */
public final class TaskLane<H extends AutoCloseable, R extends AutoCloseable>
    implements AutoCloseable {
  private final StagePipeline pipeline;
  private final TaskTag tag;
  private final String taskName;
  private final Function<H, BatchFlow<H, ?, ?, R>> flows;
  private final int maxAhead;
  private final int computer; // the compute thread of all this lane's kernels
  private final int downloader; // the download thread of all its copies
  // Results not yet taken, oldest first; a split batch's slot gives way to its parts'. Guarded.
  private final Deque<ResultSlot<R>> pending = new ArrayDeque<>();
  private final AtomicLong submitted = new AtomicLong();
  private final AtomicLongArray busyNanos = new AtomicLongArray(PipelineStage.values().length);
  private volatile boolean closed;
  private volatile boolean split; // a batch was split into parts
  private final LaneFailure failure;
  private final InPipeline inPipeline;

  <D extends AutoCloseable, O extends AutoCloseable> TaskLane(
      StagePipeline pipeline, TaskTag tag, BatchStages<H, D, O, R> stages, int maxAhead) {
    if (maxAhead < 1) {
      throw new IllegalArgumentException("maxAhead must be at least 1: " + maxAhead);
    }
    this.pipeline = pipeline;
    this.inPipeline = new InPipeline(pipeline.metrics());
    this.tag = tag;
    this.taskName = tag.name();
    this.failure = new LaneFailure(taskName);
    this.flows = host -> new BatchFlow<>(stages, host);
    this.maxAhead = maxAhead;
    this.computer = pipeline.nextComputer();
    this.downloader = pipeline.nextDownloader();
  }

  /** Index of the pipeline's compute thread that serves this lane. */
  int computer() {
    return computer;
  }

  /** Index of the pipeline's download thread that serves this lane. */
  int downloader() {
    return downloader;
  }

  /** How many batches this task may have in the pipeline before it takes a result. */
  public int maxAhead() {
    return maxAhead;
  }

  /** Results not yet taken with {@link #next}: one per batch, or per part of a split one. */
  public synchronized int pending() {
    return pending.size();
  }

  /** True when {@link #pending} has reached {@link #maxAhead}. */
  public synchronized boolean full() {
    return pending.size() >= maxAhead;
  }

  /**
   * Hands a packed batch to the pipeline. Blocks while the device budget is full. The lane owns
   * {@code host} from this call on and closes it even when this method throws. Once the pipeline is
   * closed (or while it closes) the batch is closed instead of run, and its {@link #next} throws.
   *
   * @param deviceBytes the bytes the batch will occupy on the device
   * @throws PipelineTaskException if an earlier batch of this lane already failed
   */
  public void submit(H host, long deviceBytes) throws InterruptedException {
    submit(host, deviceBytes, Waits.NEVER);
  }

  /**
   * As {@link #submit(AutoCloseable, long)}; the wait for the device budget ends with {@link
   * WaitCancelledException} when {@code cancelled} turns true.
   */
  public void submit(H host, long deviceBytes, BooleanSupplier cancelled)
      throws InterruptedException {
    try {
      checkUsable();
      pipeline.budget().acquire(deviceBytes, cancelled);
    } catch (RuntimeException | InterruptedException e) {
      Batch.closeQuietly(host);
      throw e;
    }
    long index = submitted.getAndIncrement();
    ResultSlot<R> slot = new ResultSlot<>(index);
    Batch<R> b = new Batch<>(this, index, deviceBytes, slot, flows.apply(host));
    synchronized (this) {
      pending.add(slot);
    }
    inPipeline.add(1);
    pipeline.submit(b);
  }

  /**
   * Waits for the oldest result not yet taken and returns it; the caller owns it. A batch split
   * after running out of device memory hands back its parts' results, in order, one per call.
   *
   * @throws java.util.NoSuchElementException when nothing is pending
   * @throws PipelineTaskException when that batch failed in a stage
   */
  public R next() throws InterruptedException {
    return next(Waits.NEVER);
  }

  /**
   * As {@link #next()}; the wait ends with {@link WaitCancelledException} when {@code cancelled}
   * turns true (checked every {@link Waits#POLL_MILLIS} ms).
   */
  public R next(BooleanSupplier cancelled) throws InterruptedException {
    while (true) {
      ResultSlot<R> head;
      synchronized (this) {
        if (pending.isEmpty()) {
          throw new java.util.NoSuchElementException(taskName + ": no batch pending");
        }
        head = pending.peek();
      }
      List<ResultSlot<R>> parts;
      try {
        parts = head.await(cancelled, taskName);
      } catch (ExecutionException e) {
        close();
        Throwable cause = e.getCause();
        if (cause instanceof PipelineTaskException pte) {
          throw pte;
        }
        throw new PipelineTaskException(
            taskName + ": batch " + head.index() + " failed: " + cause, cause);
      }
      synchronized (this) {
        if (closed) {
          // close() (from another thread) took the pending results, this one included, and closed
          // it: it is not the caller's to use.
          throw new PipelineTaskException(taskName + ": the task ended", null);
        }
        pending.poll();
        if (parts == null) {
          return head.take();
        }
        split = true;
        for (int i = parts.size() - 1; i >= 0; i--) {
          pending.addFirst(parts.get(i));
        }
      }
    }
  }

  /** Whether a batch of this lane was split into parts (then results are not whole batches). */
  public boolean splitSeen() {
    return split;
  }

  /** Drops every batch still in the pipeline and closes every result not yet taken. Idempotent. */
  @Override
  public void close() {
    Deque<ResultSlot<R>> drop;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      drop = new ArrayDeque<>(pending);
      pending.clear();
    }
    pipeline.laneClosed(computer, downloader);
    // Results delivered before `closed` was set are closed here; later ones by accept(). A thread
    // still waiting for one (close may come from another thread) stops waiting.
    IllegalStateException ended = new IllegalStateException(taskName + ": the task ended");
    drop.forEach(s -> s.drop(ended));
  }

  /**
   * Waits until every batch submitted has left the pipeline (its result delivered, or the batch
   * failed or dropped, with what it held closed); after {@link #close}, the pipeline's threads drop
   * the lane's batches as they reach them.
   *
   * @return false when {@code millis} passed first
   */
  public boolean awaitLeft(long millis) throws InterruptedException {
    return inPipeline.await(millis);
  }

  /**
   * As {@link #awaitLeft}, but the calling thread's interrupt does not end the wait: a killed
   * task's thread usually carries one when it reports what it still holds. The interrupt is kept
   * and set again on return.
   *
   * @return false when {@code millis} passed first
   */
  public boolean awaitLeftThroughInterrupt(long millis) {
    return inPipeline.awaitThroughInterrupt(millis);
  }

  void released() {
    inPipeline.left();
  }

  /**
   * A batch of this lane was split into {@code parts}, which take its slot's place; they count as
   * in the pipeline (the batch itself then leaves it).
   *
   * @return false when the lane is closed: the parts are to be dropped
   */
  synchronized boolean split(ResultSlot<R> slot, List<ResultSlot<R>> parts) {
    inPipeline.add(parts.size());
    return !closed && slot.split(parts);
  }

  /** Whether a batch of this lane failed in a stage. */
  public boolean failed() {
    return failure.happened();
  }

  /** Nanoseconds the pipeline's threads spent in {@code stage} on this lane's batches. */
  public long busyNanos(PipelineStage stage) {
    return busyNanos.get(stage.ordinal());
  }

  void addBusy(PipelineStage stage, long nanos) {
    busyNanos.addAndGet(stage.ordinal(), nanos);
  }

  public String taskName() {
    return taskName;
  }

  /** The task as stage listeners see it. */
  public TaskTag tag() {
    return tag;
  }

  // ---- called by the pipeline's threads ---------------------------------------------------------

  StagePipeline pipeline() {
    return pipeline;
  }

  /**
   * Whether {@code b} is still to run: its task has not ended, and no batch of the lane at or
   * before it failed. Batches ahead of a failed one still deliver their results, which the task
   * takes before it sees the failure.
   */
  boolean isLive(Batch<?> b) {
    return !closed && failure.before(b.index());
  }

  void failed(Batch<?> b, PipelineStage stage, Throwable t) {
    failure.record(b, stage, t);
  }

  Throwable abandonCause() {
    return failure.abandonCause();
  }

  /**
   * @return false when the lane is closed, or the slot already failed (its stage had stalled), and
   *     the caller must close {@code result} itself
   */
  synchronized boolean accept(ResultSlot<R> slot, R result) {
    return !closed && slot.complete(result);
  }

  private void checkUsable() {
    if (closed) {
      throw new IllegalStateException(taskName + ": lane is closed");
    }
    failure.check();
  }
}
