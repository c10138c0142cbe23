package dev.overlap.executor.input.rows;

import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.pipeline.BatchSource;

/** A source that packs Spark input into cuDF's column layout through a {@link HostBatchWriter}. */
public abstract class WriterSource implements BatchSource<HostMemoryBuffer, HostBatch> {
  private final HostBatchWriter writer;
  private boolean more = true;

  WriterSource(HostBatchWriter writer) {
    this.writer = writer;
  }

  /** Appends input to the writer's open batch; returns whether more input remains. */
  abstract boolean fill(HostBatchWriter writer);

  @Override
  public final HostBatch fill(HostMemoryBuffer staging, Runnable release) {
    try {
      writer.begin(staging, release);
    } catch (RuntimeException | Error e) {
      // No batch owns the buffer: give it back, as the contract says.
      try {
        release.run();
      } catch (RuntimeException | Error r) {
        e.addSuppressed(r);
      }
      throw e;
    }
    try {
      more = fill(writer);
    } catch (RuntimeException | Error e) {
      writer.abort();
      throw e;
    }
    return writer.finish();
  }

  @Override
  public final boolean more() {
    return more;
  }
}
