package dev.overlap.executor.input.parquet;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DeviceMemoryBuffer;
import dev.overlap.executor.gpu.Uploaded;
import dev.overlap.executor.resource.Closing;
import dev.overlap.executor.resource.RefCounted;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * A batch of compressed Parquet column chunks on its way to or on the device: the device copy of
 * the chunks (which the copy stream may still be filling), the event recorded after the copy, the
 * host batch the copy reads (kept until the copy is done) and the readers that decode the chunks.
 *
 * <p>Counted ({@link RefCounted}): the decode's result keeps one reference until the kernel's work
 * is done; the last {@link #close} waits for the copy and frees the chunks and the readers.
 *
 * <p>A batch whose decode or kernel did not fit in device memory is {@link #halves split} by row
 * group: each part decodes some of the row groups from the same chunks, and holds a reference to
 * the whole (its chunks and readers) until it is closed.
 */
public final class DeviceChunks extends RefCounted<DeviceChunks> implements Uploaded {
  private final DeviceChunks whole;
  private final DeviceMemoryBuffer chunks;
  private final Cuda.Event copied;
  private final List<ChunkPiece> pieces;
  private final AutoCloseable readers;
  private final LongAdder decodeNanos;
  private ChunkBatch host;
  private long copiedAtNanos;

  /**
   * Takes ownership of all of them.
   *
   * @param whole the batch this one is a part of, whose chunks it reads; null for a whole batch
   * @param readers what keeps the pieces' readers open ({@link ChunkBatch#readersKeeper}), closed
   *     with this batch; null when the pieces own them, and they are closed then
   */
  DeviceChunks(
      DeviceChunks whole,
      DeviceMemoryBuffer chunks,
      Cuda.Event copied,
      ChunkBatch host,
      List<ChunkPiece> pieces,
      AutoCloseable readers,
      LongAdder decodeNanos) {
    this.whole = whole;
    this.chunks = chunks;
    this.copied = copied;
    this.host = host;
    this.pieces = pieces;
    this.readers = readers;
    this.decodeNanos = decodeNanos;
  }

  /** The chunks; valid to read after {@link #awaitCopied}. */
  DeviceMemoryBuffer chunks() {
    return chunks;
  }

  List<ChunkPiece> pieces() {
    return pieces;
  }

  LongAdder decodeNanos() {
    return decodeNanos;
  }

  /**
   * Splits the row groups in two halves, in order (the first has the extra one), for a decode or a
   * kernel that did not fit. Each part holds a reference to this batch, which the caller still
   * closes. Empty for a single row group.
   */
  List<DeviceChunks> halves() {
    List<List<ChunkPiece>> halves = ChunkPiece.byRowGroups(pieces);
    if (halves.isEmpty()) {
      return List.of();
    }
    DeviceChunks all = whole == null ? this : whole;
    return List.of(part(all, halves.get(0)), part(all, halves.get(1)));
  }

  private DeviceChunks part(DeviceChunks all, List<ChunkPiece> some) {
    return new DeviceChunks(all.retain(), all.chunks, null, null, some, null, decodeNanos);
  }

  @Override
  public synchronized long awaitCopied() {
    if (whole != null) {
      return whole.awaitCopied();
    }
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
  protected void free() {
    if (whole != null) {
      whole.close(); // the part's reference to the chunks and readers
      return;
    }
    try {
      awaitCopied();
    } finally {
      try {
        if (readers == null) {
          ChunkPiece.closeReaders(pieces);
        } else {
          Closing.all(List.of(readers));
        }
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
