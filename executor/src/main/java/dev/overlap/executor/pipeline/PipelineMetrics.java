package dev.overlap.executor.pipeline;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Counters of one pipeline: busy nanoseconds per stage, batches and bytes. Upload, compute and
 * download each run on one thread; their busy time is the time that thread spent in the stage (for
 * a stage that only issues asynchronous work, that is less than the engine's busy time). Packing
 * runs on every task thread; its figure is the sum over threads.
 */
public final class PipelineMetrics {
  private final AtomicLongArray busyNanos = new AtomicLongArray(Stage.values().length);
  private final AtomicLong batches = new AtomicLong();
  private final AtomicLong bytesUploaded = new AtomicLong();
  private final AtomicLong failedBatches = new AtomicLong();

  void addBusy(Stage stage, long nanos) {
    busyNanos.addAndGet(stage.ordinal(), nanos);
  }

  /** Packing happens on task threads, outside the pipeline; they report it here. */
  public void addPacking(long nanos) {
    addBusy(Stage.PACK, nanos);
  }

  void batchDone(long bytes) {
    batches.incrementAndGet();
    bytesUploaded.addAndGet(bytes);
  }

  void batchFailed() {
    failedBatches.incrementAndGet();
  }

  public Snapshot snapshot() {
    Map<Stage, Long> busy = new EnumMap<>(Stage.class);
    for (Stage s : Stage.values()) {
      busy.put(s, busyNanos.get(s.ordinal()));
    }
    return new Snapshot(busy, batches.get(), bytesUploaded.get(), failedBatches.get());
  }

  /** Counters at one moment; subtract two to measure an interval. */
  public record Snapshot(Map<Stage, Long> busyNanos, long batches, long bytes, long failed) {
    public long busy(Stage s) {
      return busyNanos.getOrDefault(s, 0L);
    }

    public Snapshot minus(Snapshot earlier) {
      Map<Stage, Long> busy = new EnumMap<>(Stage.class);
      for (Stage s : Stage.values()) {
        busy.put(s, busy(s) - earlier.busy(s));
      }
      return new Snapshot(
          busy, batches - earlier.batches, bytes - earlier.bytes, failed - earlier.failed);
    }
  }
}
