package dev.overlap.executor.pipeline;

import dev.overlap.executor.api.PipelineStage;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Counters of one pipeline: busy nanoseconds per stage, batches and bytes. Upload runs on one
 * thread; its busy time is the time that thread spent in the stage (for a stage that only issues
 * asynchronous work, that is less than the engine's busy time). Compute and download run on one or
 * more threads, and packing on every task thread: their figures are sums over threads. The overlap
 * figure counts time with two or more different stages running, not two threads of one stage.
 */
public final class PipelineMetrics {
  private final AtomicLongArray busyNanos = new AtomicLongArray(PipelineStage.values().length);
  private final AtomicLong batches = new AtomicLong();
  private final AtomicLong bytesUploaded = new AtomicLong();
  private final AtomicLong failedBatches = new AtomicLong();
  private final AtomicLong retried = new AtomicLong();
  private final AtomicLong split = new AtomicLong();
  private final AtomicLong inPipeline = new AtomicLong();
  // Threads running each stage now, and how many stages have at least one.
  private final int[] active = new int[PipelineStage.values().length];
  private int activeStages;
  private long lastChange;
  private long overlapNanos;

  /** A stage thread starts work on a batch; returns the time, read under the lock. */
  synchronized long stageStarted(PipelineStage stage) {
    long now = System.nanoTime();
    accrue(now);
    if (active[stage.ordinal()]++ == 0) {
      activeStages++;
    }
    return now;
  }

  /** A stage thread finished its batch; returns the time, read under the lock. */
  synchronized long stageEnded(PipelineStage stage) {
    long now = System.nanoTime();
    accrue(now);
    if (--active[stage.ordinal()] == 0) {
      activeStages--;
    }
    return now;
  }

  private void accrue(long now) {
    if (activeStages >= 2) {
      overlapNanos += now - lastChange;
    }
    lastChange = now;
  }

  private synchronized long overlap() {
    accrue(System.nanoTime());
    return overlapNanos;
  }

  void addBusy(PipelineStage stage, long nanos) {
    busyNanos.addAndGet(stage.ordinal(), nanos);
  }

  /** Packing happens on task threads, outside the pipeline; they report it here. */
  public void addPacking(long nanos) {
    addBusy(PipelineStage.PACK, nanos);
  }

  void batchDone(long bytes) {
    batches.incrementAndGet();
    bytesUploaded.addAndGet(bytes);
  }

  /** {@code n} batches (or parts of a split one) entered the pipeline. */
  void entered(int n) {
    inPipeline.addAndGet(n);
  }

  /** A batch (or part) left the pipeline: delivered, failed or dropped, what it held closed. */
  void left() {
    inPipeline.decrementAndGet();
  }

  /** Batches (and parts of split ones) of every task in the pipeline now. */
  public long batchesInFlight() {
    return inPipeline.get();
  }

  void batchFailed() {
    failedBatches.incrementAndGet();
  }

  void batchRetried() {
    retried.incrementAndGet();
  }

  void batchSplit() {
    split.incrementAndGet();
  }

  /** Stages run again after a device allocation failed and the batches ahead were done. */
  public long outOfMemoryRetries() {
    return retried.get();
  }

  /** Batches (or parts) split because a stage did not fit in device memory even on a retry. */
  public long outOfMemorySplits() {
    return split.get();
  }

  public Snapshot snapshot() {
    Map<PipelineStage, Long> busy = new EnumMap<>(PipelineStage.class);
    for (PipelineStage s : PipelineStage.values()) {
      busy.put(s, busyNanos.get(s.ordinal()));
    }
    return new Snapshot(busy, batches.get(), bytesUploaded.get(), failedBatches.get(), overlap());
  }

  /**
   * Counters at one moment; subtract two to measure an interval. {@code overlapNanos} is the time
   * during which at least two of the upload, compute and download threads were working at once.
   */
  public record Snapshot(
      Map<PipelineStage, Long> busyNanos,
      long batches,
      long bytes,
      long failed,
      long overlapNanos) {
    public long busy(PipelineStage s) {
      return busyNanos.getOrDefault(s, 0L);
    }

    public Snapshot minus(Snapshot earlier) {
      Map<PipelineStage, Long> busy = new EnumMap<>(PipelineStage.class);
      for (PipelineStage s : PipelineStage.values()) {
        busy.put(s, busy(s) - earlier.busy(s));
      }
      return new Snapshot(
          busy,
          batches - earlier.batches,
          bytes - earlier.bytes,
          failed - earlier.failed,
          overlapNanos - earlier.overlapNanos);
    }
  }
}
