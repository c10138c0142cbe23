package dev.overlap.executor.pipeline;

import dev.overlap.executor.api.PipelineStage;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One batch on its way through the pipeline (or one part of a batch split after running out of
 * device memory): its values ({@link BatchFlow}), its place in its lane, its device bytes and the
 * slot its result goes to.
 *
 * <p>Budget: the batch holds {@code bytes} of the device budget from its submission, and the kernel
 * output's bytes from the end of compute; it gives all of them back when it leaves the pipeline. A
 * split batch hands its bytes on to its parts.
 *
 * @param <R> the result the task takes
 */
final class Batch<R extends AutoCloseable> {
  private static final Logger LOG = LoggerFactory.getLogger(Batch.class);

  /** How one run of a stage ended. */
  enum Outcome {
    DONE,
    /** The batch failed its lane and left the pipeline. */
    FAILED,
    /** A device allocation failed; the input is kept for a retry or a split. */
    OUT_OF_MEMORY
  }

  private final TaskLane<?, R> lane;
  private final long index;
  private final String part;
  private final long bytes;
  private final ResultSlot<R> slot;
  private final BatchFlow<?, ?, ?, R> flow;
  private long charged;
  private boolean retried;
  private String outOfMemory;
  private Throwable lastFailure;
  private boolean released;
  private boolean left;

  Batch(TaskLane<?, R> lane, long index, long bytes, ResultSlot<R> slot, BatchFlow<?, ?, ?, R> f) {
    this(lane, index, "", bytes, slot, f);
  }

  private Batch(
      TaskLane<?, R> lane,
      long index,
      String part,
      long bytes,
      ResultSlot<R> slot,
      BatchFlow<?, ?, ?, R> flow) {
    this.lane = lane;
    this.index = index;
    this.part = part;
    this.bytes = bytes;
    this.slot = slot;
    this.flow = flow;
  }

  TaskLane<?, R> lane() {
    return lane;
  }

  long index() {
    return index;
  }

  /** The batch's index, and which part of it this is when it was split ("3", "3 part 2.1"). */
  String name() {
    return part.isEmpty() ? Long.toString(index) : index + " part " + part;
  }

  long bytes() {
    return bytes;
  }

  BatchFlow<?, ?, ?, R> flow() {
    return flow;
  }

  /**
   * Runs one stage on the batch's value; its input is closed afterwards unless a device allocation
   * failed (then it is kept for {@link #retry} or {@link #split}).
   */
  Outcome runStage(PipelineStage stage) {
    try {
      flow.run(stage);
    } catch (Throwable t) {
      String oom =
          stage == PipelineStage.UPLOAD || stage == PipelineStage.COMPUTE
              ? outOfMemory(stage, t)
              : null;
      if (oom != null) {
        outOfMemory = oom;
        lastFailure = t;
        return Outcome.OUT_OF_MEMORY;
      }
      return failed(stage, t);
    }
    flow.closeSpent();
    if (stage == PipelineStage.COMPUTE) {
      try {
        charge(flow.outputBytes());
      } catch (RuntimeException e) {
        return failed(stage, e);
      }
    }
    return Outcome.DONE;
  }

  private String outOfMemory(PipelineStage stage, Throwable t) {
    try {
      return flow.stages().outOfMemory(stage, t);
    } catch (RuntimeException e) {
      t.addSuppressed(e);
      return null;
    }
  }

  /** Fails the lane with {@code t}; only once what the batch holds is closed does it leave. */
  private Outcome failed(PipelineStage stage, Throwable t) {
    flow.close();
    lane.failed(this, stage, t);
    fail(lane.abandonCause());
    return Outcome.FAILED;
  }

  /** The kernel's output on the device counts in the budget until the batch leaves. */
  private void charge(long outputBytes) {
    if (outputBytes > 0) {
      synchronized (this) {
        charged += outputBytes;
      }
      lane.pipeline().budget().charge(outputBytes);
    }
  }

  /** True the first time, when the stage is to run once more after the pipeline drained. */
  boolean retry() {
    boolean first = !retried;
    retried = true;
    return first;
  }

  /** What asked for device memory when it last failed, as the stages describe it. */
  String outOfMemory() {
    return outOfMemory;
  }

  /**
   * Splits the input {@code stage} ran out of memory on into parts that take this batch's place
   * (its slot and its budget bytes), and leaves the pipeline.
   *
   * @return the parts, in order; empty when the input cannot be split (nothing changed)
   */
  List<Batch<R>> split(PipelineStage stage) {
    List<? extends BatchFlow<?, ?, ?, R>> flows;
    try {
      flows = flow.split(stage);
    } catch (RuntimeException | Error e) {
      lastFailure.addSuppressed(e);
      return List.of();
    }
    int n = flows.size();
    if (n == 0) {
      return List.of();
    }
    List<ResultSlot<R>> slots = new ArrayList<>();
    List<Batch<R>> parts = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ResultSlot<R> s = new ResultSlot<>(index);
      String name = part.isEmpty() ? Integer.toString(i + 1) : part + "." + (i + 1);
      // The budget bytes are shared out so that the parts give back exactly this batch's.
      long share = bytes / n + (i < bytes % n ? 1 : 0);
      slots.add(s);
      parts.add(new Batch<>(lane, index, name, share, s, flows.get(i)));
    }
    if (!lane.split(slot, slots)) {
      LOG.debug("{}: batch {} split after its task ended", lane.taskName(), name());
    }
    synchronized (this) {
      released = true; // the parts hold the bytes now
    }
    left();
    return parts;
  }

  /** The last stage is done: hand the result to the task, or close it if the task is gone. */
  void deliver() {
    R r = flow.takeResult();
    // The batch's device memory is gone: give its bytes back before the task sees the result, so
    // a task that took all its results never observes its own bytes still in flight.
    releaseBytes(true);
    try {
      if (!lane.accept(slot, r)) {
        closeQuietly(r);
      }
    } finally {
      // Only once the result is the task's, or closed, has the batch left the pipeline.
      left();
    }
  }

  /**
   * Its stage ran past the stall timeout, and still runs (the watch calls this on its own thread):
   * the lane fails with {@code stall}, and the task's wait for this batch's result ends now. What
   * the batch holds stays the running stage's; should the stage ever return, the batch is dropped
   * (its lane failed) and leaves the pipeline then.
   */
  void stalled(PipelineStage stage, StageStallException stall) {
    lane.failed(this, stage, stall);
    slot.fail(lane.abandonCause());
  }

  /** The batch will not run further: close what it holds and tell the task why. */
  void abandon(Throwable cause) {
    if (flow != null) {
      flow.close();
    }
    fail(cause == null ? lane.abandonCause() : cause);
  }

  /**
   * The batch ran out of device memory and cannot be split: it fails its lane with {@code line}.
   */
  void failOutOfMemory(PipelineStage stage, String line) {
    failed(stage, new OutOfDeviceMemoryException(line, lastFailure));
  }

  private void fail(Throwable cause) {
    slot.fail(cause);
    releaseBytes(false);
    left();
  }

  private void releaseBytes(boolean completed) {
    long all;
    synchronized (this) {
      if (released) {
        return;
      }
      released = true;
      all = bytes + charged;
    }
    lane.pipeline().batchReleased(all, bytes, completed);
  }

  private synchronized void left() {
    if (!left) {
      left = true;
      lane.released();
    }
  }

  static void closeQuietly(AutoCloseable c) {
    if (c == null) {
      return;
    }
    try {
      c.close();
    } catch (Exception e) {
      LOG.warn("closing {} failed", c.getClass().getSimpleName(), e);
    }
  }
}
