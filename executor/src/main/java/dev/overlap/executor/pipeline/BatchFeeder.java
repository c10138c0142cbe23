package dev.overlap.executor.pipeline;

import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.resource.BatchTracker;
import dev.overlap.executor.resource.TaskTag;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * The packing half of a {@link TaskDriver}: on the task's thread, fills batches from its source
 * into staging buffers and submits them to its lane, and counts what that took.
 *
 * @param <S> a staging buffer
 * @param <H> a filled batch
 */
final class BatchFeeder<S extends AutoCloseable, H extends PackedBatch> {
  private final StagePipeline pipeline;
  private final BoundedPool<S> staging;
  private final BatchSource<S, H> source;
  private final TaskLane<H, ?> lane;
  private final BooleanSupplier cancelled;
  private boolean more = true;
  private long bytes;
  // The rows of each batch submitted, in order, for the task's continuation after a GPU fault.
  private final java.util.List<Long> submittedRows = new java.util.ArrayList<>();
  private long packNanos;
  private long upstreamNanos;
  private long packed;
  private long stagingWait;

  BatchFeeder(
      StagePipeline pipeline,
      BoundedPool<S> staging,
      BatchSource<S, H> source,
      TaskLane<H, ?> lane,
      BooleanSupplier cancelled) {
    this.pipeline = pipeline;
    this.staging = staging;
    this.source = source;
    this.lane = lane;
    this.cancelled = cancelled;
  }

  /** Fills and submits batches until the lane is full or the input is done. */
  void fill() throws InterruptedException {
    // Once a batch failed, nothing more is submitted; the results of the batches ahead of it are
    // still taken, in order, before its failure ends the task.
    while (more && !lane.full() && !lane.failed()) {
      long waitFrom = System.nanoTime();
      S buf = staging.acquire(cancelled);
      // The batch owns the buffer once filled; until then this method does. Run at most once, so
      // a source that already gave the buffer back is not released twice.
      AtomicBoolean given = new AtomicBoolean();
      Runnable giveBack =
          () -> {
            if (given.compareAndSet(false, true)) {
              staging.release(buf);
            }
          };
      long start = System.nanoTime();
      stagingWait += start - waitFrom;
      StageListener l = pipeline.listener();
      H batch;
      TaskTag before = BatchTracker.enter(lane.tag());
      try {
        StagePipeline.started(l, new StageRun(PipelineStage.PACK, lane.tag(), packed, 0, start));
        batch = source.fill(buf, giveBack);
      } catch (RuntimeException | Error e) {
        try {
          giveBack.run();
        } catch (RuntimeException | Error r) {
          e.addSuppressed(r);
        }
        StagePipeline.ended(
            l,
            new StageRun(PipelineStage.PACK, lane.tag(), packed, 0, start),
            System.nanoTime(),
            false);
        throw e;
      } finally {
        BatchTracker.leave(before);
      }
      long end;
      try {
        more = source.more();
        end = System.nanoTime();
        long took = end - start;
        if (source.packsOnHost()) {
          pipeline.metrics().addPacking(took);
          packNanos += took;
        } else {
          upstreamNanos += took;
        }
        StagePipeline.ended(
            l,
            new StageRun(PipelineStage.PACK, lane.tag(), packed, batch.copyBytes(), start),
            end,
            true);
        if (batch.rows() == 0) {
          batch.close();
          break;
        }
      } catch (RuntimeException | Error e) {
        try {
          batch.close();
        } catch (RuntimeException | Error r) {
          e.addSuppressed(r);
        }
        throw e;
      }
      packed++;
      bytes += batch.copyBytes();
      submittedRows.add((long) batch.rows());
      lane.submit(batch, batch.deviceBytes(), cancelled);
    }
  }

  /** Rows of the first {@code batches} batches submitted, in order. */
  long rowsOfFirst(long batches) {
    long n = 0;
    for (int i = 0; i < batches; i++) {
      n += submittedRows.get(i);
    }
    return n;
  }

  /** Rows the source read. */
  long rowsRead() {
    return source.rowsRead();
  }

  /** Bytes of the batches submitted. */
  long bytes() {
    return bytes;
  }

  /** Time spent filling batches on the host. */
  long packNanos() {
    return packNanos;
  }

  /** Time spent waiting for device batches another plugin made. */
  long upstreamNanos() {
    return upstreamNanos;
  }

  /** Time spent waiting for a free staging buffer. */
  long stagingWaitNanos() {
    return stagingWait;
  }
}
