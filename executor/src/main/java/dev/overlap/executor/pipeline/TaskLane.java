package dev.overlap.executor.pipeline;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * One task's way into the executor-wide {@link StagePipeline}. The task {@link #submit submits}
 * packed host batches and {@link #next takes} results back in submission order.
 *
 * <p>Threading: a lane belongs to one task; {@link #submit}, {@link #next} and {@link #close} are
 * called from that task's thread, except that {@code close} may also come from Spark's task
 * completion callback on the same thread or another.
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
  private final Deque<Batch<R>> pending = new ArrayDeque<>();
  private final AtomicLong submitted = new AtomicLong();
  private final java.util.concurrent.atomic.AtomicLongArray busyNanos =
      new java.util.concurrent.atomic.AtomicLongArray(Stage.values().length);
  private volatile boolean closed;
  private volatile Throwable failure;
  // Batches submitted and not yet released (delivered, failed or dropped); guarded by this.
  private int inPipeline;

  <D extends AutoCloseable, O extends AutoCloseable> TaskLane(
      StagePipeline pipeline, TaskTag tag, BatchStages<H, D, O, R> stages, int maxAhead) {
    if (maxAhead < 1) {
      throw new IllegalArgumentException("maxAhead must be at least 1: " + maxAhead);
    }
    this.pipeline = pipeline;
    this.tag = tag;
    this.taskName = tag.name();
    this.flows = host -> new BatchFlow<>(stages, host);
    this.maxAhead = maxAhead;
  }

  /** How many batches this task may have in the pipeline before it takes a result. */
  public int maxAhead() {
    return maxAhead;
  }

  /** Batches submitted and not yet taken with {@link #next}. */
  public synchronized int pending() {
    return pending.size();
  }

  /** True when {@link #pending} has reached {@link #maxAhead}. */
  public synchronized boolean full() {
    return pending.size() >= maxAhead;
  }

  /**
   * Hands a packed batch to the pipeline. Blocks while the device budget is full. The lane owns
   * {@code host} from this call on and closes it even when this method throws.
   *
   * @param deviceBytes the bytes the batch will occupy on the device
   * @throws PipelineTaskException if an earlier batch of this lane already failed
   */
  public void submit(H host, long deviceBytes) throws InterruptedException {
    submit(host, deviceBytes, Waits.NEVER);
  }

  /**
   * As {@link #submit(AutoCloseable, long)}; the wait for the device budget ends with {@link
   * InterruptedException} when {@code cancelled} turns true.
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
    Batch<R> b = new Batch<>(this, submitted.getAndIncrement(), deviceBytes, flows.apply(host));
    synchronized (this) {
      pending.add(b);
      inPipeline++;
    }
    pipeline.submit(b);
  }

  /**
   * Waits for the oldest submitted batch and returns its result; the caller owns it.
   *
   * @throws java.util.NoSuchElementException when nothing is pending
   * @throws PipelineTaskException when that batch failed in a stage
   */
  public R next() throws InterruptedException {
    return next(Waits.NEVER);
  }

  /**
   * As {@link #next()}; the wait ends with {@link InterruptedException} when {@code cancelled}
   * turns true (checked every {@link Waits#POLL_MILLIS} ms).
   */
  public R next(BooleanSupplier cancelled) throws InterruptedException {
    Batch<R> head;
    synchronized (this) {
      if (pending.isEmpty()) {
        throw new java.util.NoSuchElementException(taskName + ": no batch pending");
      }
      head = pending.peek();
    }
    R value;
    try {
      value = await(head, cancelled);
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
    }
    return value;
  }

  private R await(Batch<R> head, BooleanSupplier cancelled)
      throws InterruptedException, ExecutionException {
    while (true) {
      if (cancelled.getAsBoolean()) {
        throw new InterruptedException(
            taskName + ": cancelled while waiting for the result of batch " + head.index());
      }
      try {
        return head.result().get(Waits.POLL_MILLIS, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        // check again
      }
    }
  }

  /** Drops every batch still in the pipeline and closes every result not yet taken. Idempotent. */
  @Override
  public void close() {
    Deque<Batch<R>> drop;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      drop = new ArrayDeque<>(pending);
      pending.clear();
    }
    IllegalStateException ended = new IllegalStateException(taskName + ": the task ended");
    for (Batch<R> b : drop) {
      // Results delivered before `closed` was set are closed here; later ones by accept(). A
      // thread still waiting for one (close may come from another thread) stops waiting.
      if (!b.result().completeExceptionally(ended) && !b.result().isCompletedExceptionally()) {
        Batch.closeQuietly(b.result().join());
      }
    }
  }

  /**
   * Waits until every batch submitted has left the pipeline (its result delivered, or the batch
   * failed or dropped, with what it held closed); after {@link #close}, the pipeline's threads drop
   * the lane's batches as they reach them.
   *
   * @return false when {@code millis} passed first
   */
  public synchronized boolean awaitLeft(long millis) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    while (inPipeline > 0) {
      long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      if (left <= 0) {
        return false;
      }
      wait(left);
    }
    return true;
  }

  /**
   * As {@link #awaitLeft}, but the calling thread's interrupt does not end the wait: a killed
   * task's thread usually carries one when it reports what it still holds. The interrupt is kept
   * and set again on return.
   *
   * @return false when {@code millis} passed first
   */
  public boolean awaitLeftThroughInterrupt(long millis) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    boolean interrupted = Thread.interrupted();
    try {
      while (true) {
        try {
          return awaitLeft(
              Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  synchronized void released() {
    if (--inPipeline == 0) {
      notifyAll();
    }
  }

  /** Nanoseconds the pipeline's threads spent in {@code stage} on this lane's batches. */
  public long busyNanos(Stage stage) {
    return busyNanos.get(stage.ordinal());
  }

  void addBusy(Stage stage, long nanos) {
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

  boolean isLive() {
    return !closed && failure == null;
  }

  void failed(Batch<?> b, Stage stage, Throwable t) {
    synchronized (this) {
      if (failure == null) {
        failure =
            new PipelineTaskException(
                taskName + ": batch " + b.index() + " failed in " + stage.label() + ": " + t, t);
      }
    }
  }

  Throwable abandonCause() {
    Throwable f = failure;
    return f != null
        ? f
        : new IllegalStateException(taskName + ": task ended before the batch ran");
  }

  /**
   * @return false when the lane is closed and the caller must close {@code result} itself
   */
  synchronized boolean accept(Batch<R> b, R result) {
    if (closed) {
      return false;
    }
    b.result().complete(result);
    return true;
  }

  private void checkUsable() {
    if (closed) {
      throw new IllegalStateException(taskName + ": lane is closed");
    }
    Throwable f = failure;
    if (f != null) {
      throw (f instanceof PipelineTaskException p)
          ? p
          : new PipelineTaskException(taskName + ": an earlier batch failed", f);
    }
  }
}
