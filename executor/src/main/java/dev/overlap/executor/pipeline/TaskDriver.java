package dev.overlap.executor.pipeline;

import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.resource.BatchTracker;
import dev.overlap.executor.resource.TaskTag;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One task's GPU path: fills batches from its source into staging buffers on the task's thread,
 * submits them to the executor pipeline, keeping up to {@code maxAhead} in flight, and hands back
 * the result rows in order. Knows neither Spark nor CUDA: the pipeline, the staging pool, the
 * stages and the source come from the caller.
 *
 * <p>Ownership: a staging buffer belongs to the batch filled into it, which gives it back to the
 * pool (see {@link BatchSource#fill}); a submitted batch belongs to the lane; a result belongs to
 * this driver until its rows are consumed, then it is closed. {@link #finish} (on the end of the
 * input, a failure, or the task's end) closes the lane and the current result and reports the
 * task's figures once. A row is valid until the next call into this driver, or until {@code
 * finish}.
 *
 * <p>Threading: {@link #hasNext} and {@link #next} run on the task's thread; {@code finish} may
 * come from another (Spark's task-completion listener). While the task's thread is inside one of
 * them, {@code finish} closes the lane at once, which ends its wait for a result, and leaves the
 * current result to that thread, which closes it and reports the figures as it leaves the call.
 * After {@code finish}, {@code hasNext} is false if the input ran out and otherwise throws {@link
 * IllegalStateException}: the task ended before its rows were all read.
 *
 * @param <S> a staging buffer
 * @param <H> a filled batch
 * @param <R> a batch's result on the host
 * @param <T> a result row
 */
public final class TaskDriver<
        S extends AutoCloseable, H extends PackedBatch, R extends ResultBatch<T>, T>
    implements Iterator<T> {
  private static final Logger LOG = LoggerFactory.getLogger(TaskDriver.class);

  /** How long debug mode waits at a task's end for its batches to leave the pipeline. */
  static final long HELD_WAIT_MILLIS = 10_000;

  /**
   * What the task did, reported once when it ends.
   *
   * @param packNanos time the task's thread spent filling batches on the host
   * @param upstreamNanos time the task's thread spent waiting for device batches another plugin
   *     made ({@link BatchSource#packsOnHost} false)
   * @param busyNanos time the pipeline's threads spent on this task's batches, per stage
   * @param stagingWaitNanos time the task's thread waited for a free staging buffer
   * @param resultWaitNanos time the task's thread waited for a result
   */
  public record Figures(
      long rowsIn,
      long rowsOut,
      long batches,
      long bytes,
      long packNanos,
      long upstreamNanos,
      Map<PipelineStage, Long> busyNanos,
      long stagingWaitNanos,
      long resultWaitNanos) {}

  private final TaskLane<H, R> lane;
  private final BatchFeeder<S, H> feeder;
  // Results taken and handed on whole, one per batch unless one was split.
  private long consumed;
  private final Consumer<Figures> onFinish;
  private final BooleanSupplier cancelled;
  private R current;
  private Iterator<T> rows = Collections.emptyIterator();
  private long rowsOut;
  private long batches;
  private long resultWait;
  private final TaskEnding ending;

  /**
   * Opens the task's lane on {@code pipeline}; the pipeline's {@link StageListener} sees the task
   * as {@code task}, and is told of each batch's packing on this task's thread. Every wait of the
   * task's thread (for a staging buffer, the device budget, a result) ends when {@code cancelled}
   * turns true, and the task fails.
   *
   * @param onFinish receives the task's figures when it ends; may be null
   * @param cancelled whether the task was killed (Spark's {@code TaskContext.isInterrupted});
   *     {@link Waits#NEVER} when it cannot be
   */
  public TaskDriver(
      StagePipeline pipeline,
      BoundedPool<S> staging,
      BatchStages<H, ?, ?, R> stages,
      BatchSource<S, H> source,
      TaskTag task,
      int maxAhead,
      Consumer<Figures> onFinish,
      BooleanSupplier cancelled) {
    this.cancelled = cancelled;
    this.onFinish = onFinish;
    this.lane = pipeline.openLane(task, stages, maxAhead);
    this.feeder = new BatchFeeder<>(pipeline, staging, source, lane, cancelled);
    this.ending = new TaskEnding(lane.taskName(), lane::close, this::end);
  }

  @Override
  public boolean hasNext() {
    if (!ending.enter()) {
      return false;
    }
    try {
      return advance();
    } finally {
      ending.leave();
    }
  }

  @Override
  public T next() {
    if (!ending.enter()) {
      throw new NoSuchElementException();
    }
    try {
      if (!advance()) {
        throw new NoSuchElementException();
      }
      rowsOut++;
      return rows.next();
    } finally {
      ending.leave();
    }
  }

  private boolean advance() {
    try {
      while (!rows.hasNext()) {
        if (current != null) {
          current.close();
          current = null;
          consumed++;
        }
        if (ending.ended()) {
          // From another thread, during this call: the lane is closed.
          throw new IllegalStateException(lane.taskName() + ": the task ended");
        }
        feeder.fill();
        if (lane.pending() == 0) {
          if (ending.ended()) {
            // The lane emptied because another thread ended the task, not because the input did.
            throw new IllegalStateException(lane.taskName() + ": the task ended");
          }
          ending.end(true);
          return false;
        }
        long waitFrom = System.nanoTime();
        current = lane.next(cancelled);
        resultWait += System.nanoTime() - waitFrom;
        batches++;
        rows = current.rows();
      }
      return true;
    } catch (InterruptedException e) {
      // Only an interrupt's flag is set again: a wait its cancellation ended (the task killed, the
      // GPU fenced) leaves the flag as it was, and the thread is not to look interrupted after it.
      boolean interrupt = WaitCancelledException.byInterrupt(e);
      if (interrupt) {
        Thread.currentThread().interrupt();
      }
      finish();
      throw new IllegalStateException(
          (interrupt ? "interrupted" : "cancelled")
              + " while waiting for the GPU pipeline: "
              + e.getMessage(),
          e);
    } catch (RuntimeException | Error e) {
      finish();
      throw e;
    }
  }

  /**
   * The input rows of the batches whose results were all handed on, in order: where the task's
   * input goes on without the GPU after a fault. -1 when a batch was split into parts, whose rows
   * are not counted apart. On the task's thread.
   */
  public long handedOnInputRows() {
    return lane.splitSeen() ? -1 : feeder.rowsOfFirst(consumed);
  }

  /**
   * Ends the task's use of the pipeline: closes the current result and the lane (dropping what is
   * still in flight) and reports the figures. Idempotent; runs on success, failure and kill alike,
   * on any thread (see the class comment for a call while the task's thread is in the driver).
   */
  public void finish() {
    ending.end(false);
  }

  /** Closes the current result and the lane and reports the figures: once, by one thread. */
  private void end() {
    rows = Collections.emptyIterator();
    if (current != null) {
      R c = current;
      current = null;
      c.close();
    }
    lane.close();
    if (BatchTracker.on()) {
      reportHeld();
    }
    if (onFinish != null) {
      Map<PipelineStage, Long> nanos = new EnumMap<>(PipelineStage.class);
      for (PipelineStage s :
          new PipelineStage[] {
            PipelineStage.UPLOAD, PipelineStage.COMPUTE, PipelineStage.DOWNLOAD
          }) {
        nanos.put(s, lane.busyNanos(s));
      }
      onFinish.accept(
          new Figures(
              feeder.rowsRead(),
              rowsOut,
              batches,
              feeder.bytes(),
              feeder.packNanos(),
              feeder.upstreamNanos(),
              nanos,
              feeder.stagingWaitNanos(),
              resultWait));
    }
  }

  /**
   * Debug mode: once the pipeline has dropped what it still had of this task (a killed task's
   * batches in flight are not leaks), reports the task's batches still held.
   */
  private void reportHeld() {
    // Not cut short by the interrupt a killed task's thread carries: its batches still in flight
    // are dropped by the pipeline's threads, and would otherwise be reported as held.
    if (!lane.awaitLeftThroughInterrupt(HELD_WAIT_MILLIS)) {
      LOG.warn(
          "{}: batches still in the pipeline {} ms after the task ended; those reported below may"
              + " be among them",
          lane.taskName(),
          HELD_WAIT_MILLIS);
    }
    BatchTracker.taskEnded(lane.tag());
  }
}
