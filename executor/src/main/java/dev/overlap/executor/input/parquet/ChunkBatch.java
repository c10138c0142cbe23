package dev.overlap.executor.input.parquet;

import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.pipeline.PackedBatch;
import dev.overlap.executor.resource.RefCounted;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * One batch of Parquet input for the GPU to decode: the compressed column chunks of some row groups
 * of one or more files, read back to back into a host buffer, and per file a cuDF reader that knows
 * how to decode them.
 *
 * <p>Ownership: the batch owns its buffer (handed back through {@code release} when the last owner
 * closes it) and its pieces' readers until {@link #takePieces} hands them to the stage that decodes
 * them. {@link #retain} adds an owner (the upload keeps one until its copy is done). A part cut
 * from a batch whose upload did not fit ({@link #halves}) holds a reference to that batch, whose
 * buffer and readers it uses; its {@link #readersKeeper} keeps them for the decode.
 */
public final class ChunkBatch extends RefCounted<ChunkBatch> implements PackedBatch {

  private final HostMemoryBuffer buffer;
  private final Runnable release;
  private final ChunkBatch whole;
  private final long copyFrom;
  private List<ChunkPiece> pieces;
  private final long rows;
  private final long bytes;
  private final long deviceBytes;
  private final LongAdder decodeNanos;

  ChunkBatch(
      HostMemoryBuffer buffer,
      Runnable release,
      List<ChunkPiece> pieces,
      long rows,
      long bytes,
      long deviceBytes,
      LongAdder decodeNanos) {
    this(buffer, release, null, 0, pieces, rows, bytes, deviceBytes, decodeNanos);
  }

  private ChunkBatch(
      HostMemoryBuffer buffer,
      Runnable release,
      ChunkBatch whole,
      long copyFrom,
      List<ChunkPiece> pieces,
      long rows,
      long bytes,
      long deviceBytes,
      LongAdder decodeNanos) {
    this.buffer = buffer;
    this.release = release;
    this.whole = whole;
    this.copyFrom = copyFrom;
    this.pieces = pieces;
    this.rows = rows;
    this.bytes = bytes;
    this.deviceBytes = deviceBytes;
    this.decodeNanos = decodeNanos;
  }

  @Override
  public int rows() {
    return (int) rows;
  }

  /** The chunks' bytes, from {@link #copyFrom} in {@link #buffer}. */
  @Override
  public long copyBytes() {
    return bytes;
  }

  /** Where the chunks start in {@link #buffer}: 0 but for a part. */
  public long copyFrom() {
    return copyFrom;
  }

  /** The compressed chunks and the decoded columns, as the footer sizes them. */
  @Override
  public long deviceBytes() {
    return deviceBytes;
  }

  public HostMemoryBuffer buffer() {
    return buffer;
  }

  /** Where the decode stage adds the time it spent on this batch's task. */
  public LongAdder decodeNanos() {
    return decodeNanos;
  }

  /** The files its chunks come from ({@link ChunkPiece#files}); empty once its pieces are taken. */
  public synchronized String files() {
    return pieces == null ? "" : ChunkPiece.files(pieces);
  }

  /** Hands the pieces, and the readers in them, to the caller; a second call fails. */
  public synchronized List<ChunkPiece> takePieces() {
    if (pieces == null) {
      throw new IllegalStateException("pieces already taken");
    }
    List<ChunkPiece> p = pieces;
    pieces = null;
    return p;
  }

  /**
   * What keeps the readers of the pieces {@link #takePieces taken} open until their decode is done:
   * null when the pieces own their readers (their taker closes them), else, for a part, a new
   * reference to the batch it was cut from, to close once done with them.
   */
  public AutoCloseable readersKeeper() {
    return whole == null ? null : whole.retain();
  }

  /**
   * Cuts the batch's row groups in two halves, in order (the first has the extra one), for an
   * upload that did not fit in device memory: each part copies only the span of the buffer its
   * chunks lie in. Each holds a reference to this batch, which the caller still closes. Empty for a
   * single row group.
   */
  public List<ChunkBatch> halves() {
    List<ChunkPiece> all;
    synchronized (this) {
      all = pieces;
    }
    List<List<ChunkPiece>> halves = all == null ? List.of() : ChunkPiece.byRowGroups(all);
    if (halves.isEmpty()) {
      return List.of();
    }
    return List.of(part(halves.get(0)), part(halves.get(1)));
  }

  private ChunkBatch part(List<ChunkPiece> some) {
    long lo = Long.MAX_VALUE;
    long hi = 0;
    long partRows = 0;
    for (ChunkPiece p : some) {
      for (int i = 0; i < p.at().length; i++) {
        lo = Math.min(lo, p.at()[i]);
        hi = Math.max(hi, p.at()[i] + p.lengths()[i]);
      }
      partRows += p.rows();
    }
    long from = lo == Long.MAX_VALUE ? 0 : lo;
    List<ChunkPiece> moved = new ArrayList<>();
    for (ChunkPiece p : some) {
      moved.add(p.moved(from));
    }
    ChunkBatch top = whole == null ? this : whole;
    ChunkBatch kept = retain();
    long device = rows == 0 ? 0 : deviceBytes * partRows / rows;
    return new ChunkBatch(
        buffer,
        kept::close,
        top,
        copyFrom + from,
        moved,
        partRows,
        Math.max(0, hi - from),
        device,
        decodeNanos);
  }

  @Override
  protected void free() {
    try {
      if (pieces != null && whole == null) {
        ChunkPiece.closeReaders(pieces); // a part's readers are the whole batch's
      }
      pieces = null;
    } finally {
      release.run();
    }
  }
}
