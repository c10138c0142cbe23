package dev.overlap.executor.api;

import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;

/**
 * The counters of the executor pipeline in this JVM since it started, over every task and job;
 * subtract two with {@link #minus} to measure an interval.
 *
 * @param busyNanos busy nanoseconds per stage; packing summed over the task threads
 * @param batches batches that came back from the GPU
 * @param bytes device bytes of the batches the GPU finished: the packed columns for rows, the
 *     decoded columns for Parquet (larger than the chunks copied; the bytes copied are {@link
 *     PipelineReport#bytesCopied()})
 * @param overlapNanos time during which at least two of copy, compute and copy back ran at once
 */
@Public
public record PipelineTotals(
    Map<PipelineStage, Long> busyNanos, long batches, long bytes, long overlapNanos) {

  public PipelineTotals {
    busyNanos = Map.copyOf(busyNanos);
  }

  /**
   * The counters of this JVM's executor pipeline; empty when no executor with a usable GPU runs in
   * this JVM (on a cluster's driver, say: read the executors' plugin metrics there instead).
   */
  public static Optional<PipelineTotals> current() {
    return Engine.get().pipelineTotals();
  }

  public long busy(PipelineStage s) {
    return busyNanos.getOrDefault(s, 0L);
  }

  /** These counters less {@code earlier}'s. */
  public PipelineTotals minus(PipelineTotals earlier) {
    Map<PipelineStage, Long> busy = new EnumMap<>(PipelineStage.class);
    for (PipelineStage s : PipelineStage.values()) {
      busy.put(s, busy(s) - earlier.busy(s));
    }
    return new PipelineTotals(
        busy,
        batches - earlier.batches,
        bytes - earlier.bytes,
        overlapNanos - earlier.overlapNanos);
  }
}
