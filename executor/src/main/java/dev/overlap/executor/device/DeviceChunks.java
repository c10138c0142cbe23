package dev.overlap.executor.device;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DeviceMemoryBuffer;
import dev.overlap.executor.pipeline.BatchTracker;
import dev.overlap.executor.scan.ChunkBatch;
import java.util.List;

/**
 * A batch of compressed Parquet column chunks on its way to or on the device: the device copy of
 * the chunks (which the copy stream may still be filling), the event recorded after the copy, the
 * host batch the copy reads (kept until the copy is done) and the readers that decode the chunks.
 *
 * <p>Counted like {@link DeviceBatch}: the decode's result keeps one reference until the kernel's
 * work is done; the last {@link #close} waits for the copy and frees the chunks and the readers.
 */
public final class DeviceChunks implements Uploaded {
  private final DeviceMemoryBuffer chunks;
  private final Cuda.Event copied;
  private final List<ChunkBatch.Piece> pieces;
  private final java.util.concurrent.atomic.LongAdder decodeNanos;
  private ChunkBatch host;
  private int refs = 1;
  private final BatchTracker.Held tracked;
  private long copiedAtNanos;

  /** Takes ownership of all of them. */
  DeviceChunks(
      DeviceMemoryBuffer chunks,
      Cuda.Event copied,
      ChunkBatch host,
      List<ChunkBatch.Piece> pieces,
      java.util.concurrent.atomic.LongAdder decodeNanos) {
    this.chunks = chunks;
    this.copied = copied;
    this.host = host;
    this.pieces = pieces;
    this.decodeNanos = decodeNanos;
    this.tracked = BatchTracker.made(this);
  }

  /** The chunks; valid to read after {@link #awaitCopied}. */
  DeviceMemoryBuffer chunks() {
    return chunks;
  }

  List<ChunkBatch.Piece> pieces() {
    return pieces;
  }

  java.util.concurrent.atomic.LongAdder decodeNanos() {
    return decodeNanos;
  }

  synchronized DeviceChunks retain() {
    if (refs <= 0) {
      throw new IllegalStateException("DeviceChunks already closed");
    }
    refs++;
    BatchTracker.retained(tracked);
    return this;
  }

  @Override
  public synchronized long awaitCopied() {
    if (host != null) {
      copied.sync();
      copiedAtNanos = System.nanoTime();
      ChunkBatch h = host;
      host = null;
      h.close();
    }
    return copiedAtNanos;
  }

  @Override
  public synchronized void close() {
    if (refs <= 0) {
      throw new IllegalStateException("DeviceChunks closed twice");
    }
    BatchTracker.closed(tracked);
    if (--refs > 0) {
      return;
    }
    try {
      awaitCopied();
    } finally {
      try {
        ChunkBatch.closeReaders(pieces);
      } finally {
        try {
          chunks.close();
        } finally {
          copied.close();
        }
      }
    }
  }
}
