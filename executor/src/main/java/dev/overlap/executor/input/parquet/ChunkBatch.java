package dev.overlap.executor.input.parquet;

import ai.rapids.cudf.ByteRange;
import ai.rapids.cudf.HostMemoryBuffer;
import ai.rapids.cudf.HybridScanReader;
import dev.overlap.executor.pipeline.PackedBatch;
import dev.overlap.executor.resource.RefCounted;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

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
  /**
   * The chunks of one file in this batch.
   *
   * @param reader decodes them; built from the file's footer with its columns selected
   * @param rowGroups the row groups, indices in the file
   * @param groupRows rows in each of those row groups
   * @param at where each chunk starts in the batch's buffer, in the order the reader wants them
   * @param lengths each chunk's length
   * @param fileOffsets where each chunk starts in the file
   * @param rows rows in those row groups
   * @param columns how the decoded columns answer the kernel's input
   * @param file the file's name, for messages
   * @param freshReader builds another reader like {@code reader}: a reader decodes its row groups
   *     once, and a decode that runs again (after running out of device memory, or for part of a
   *     split batch) takes a reader of its own
   * @param decoded whether {@code reader} has decoded already; shared by the pieces cut from this
   *     one, which use the same reader
   */
  public record Piece(
      HybridScanReader reader,
      int[] rowGroups,
      long[] groupRows,
      long[] at,
      long[] lengths,
      long[] fileOffsets,
      long rows,
      FileColumns columns,
      String file,
      Supplier<HybridScanReader> freshReader,
      AtomicBoolean decoded) {

    /** The same chunks, {@code by} bytes earlier in their buffer. */
    Piece moved(long by) {
      long[] a = at.clone();
      for (int i = 0; i < a.length; i++) {
        a[i] -= by;
      }
      return new Piece(
          reader,
          rowGroups,
          groupRows,
          a,
          lengths,
          fileOffsets,
          rows,
          columns,
          file,
          freshReader,
          decoded);
    }

    /**
     * The chunks of row groups {@code [from, to)} of this piece (indices into {@link #rowGroups}),
     * where they lie in the same buffer, in the order the reader wants them for those groups.
     *
     * @throws IllegalStateException when the reader asks for a chunk this piece does not hold
     */
    public Piece groups(int from, int to) {
      int[] groups = Arrays.copyOfRange(rowGroups, from, to);
      long[] rowsOf = Arrays.copyOfRange(groupRows, from, to);
      ByteRange[] ranges = reader.allColumnChunksByteRanges(groups);
      long[] partAt = new long[ranges.length];
      long[] partLengths = new long[ranges.length];
      long[] partOffsets = new long[ranges.length];
      for (int i = 0; i < ranges.length; i++) {
        int k = indexOf(ranges[i].offset(), ranges[i].size());
        partAt[i] = at[k];
        partLengths[i] = lengths[k];
        partOffsets[i] = fileOffsets[k];
      }
      long n = Arrays.stream(rowsOf).sum();
      return new Piece(
          reader,
          groups,
          rowsOf,
          partAt,
          partLengths,
          partOffsets,
          n,
          columns,
          file,
          freshReader,
          decoded);
    }

    private int indexOf(long offset, long size) {
      for (int k = 0; k < fileOffsets.length; k++) {
        if (fileOffsets[k] == offset && lengths[k] == size) {
          return k;
        }
      }
      throw new IllegalStateException(
          file + ": the reader asks for a chunk at " + offset + " that the batch did not read");
    }
  }

  private final HostMemoryBuffer buffer;
  private final Runnable release;
  private final ChunkBatch whole;
  private final long copyFrom;
  private List<Piece> pieces;
  private final long rows;
  private final long bytes;
  private final long deviceBytes;
  private final LongAdder decodeNanos;

  ChunkBatch(
      HostMemoryBuffer buffer,
      Runnable release,
      List<Piece> pieces,
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
      List<Piece> pieces,
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

  /** Hands the pieces, and the readers in them, to the caller; a second call fails. */
  public synchronized List<Piece> takePieces() {
    if (pieces == null) {
      throw new IllegalStateException("pieces already taken");
    }
    List<Piece> p = pieces;
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
    List<Piece> all;
    synchronized (this) {
      all = pieces;
    }
    List<List<Piece>> halves = all == null ? List.of() : byRowGroups(all);
    if (halves.isEmpty()) {
      return List.of();
    }
    return List.of(part(halves.get(0)), part(halves.get(1)));
  }

  /**
   * The row groups of {@code pieces} in two halves, in order (the first has the extra one), each
   * piece cut where the halves meet; empty for a single row group.
   */
  static List<List<Piece>> byRowGroups(List<Piece> pieces) {
    int groups = pieces.stream().mapToInt(p -> p.rowGroups().length).sum();
    if (groups < 2) {
      return List.of();
    }
    int firstHalf = (groups + 1) / 2;
    List<Piece> head = new ArrayList<>();
    List<Piece> tail = new ArrayList<>();
    int seen = 0;
    for (Piece p : pieces) {
      int n = p.rowGroups().length;
      int inHead = Math.max(0, Math.min(n, firstHalf - seen));
      if (inHead > 0) {
        head.add(inHead == n ? p : p.groups(0, inHead));
      }
      if (inHead < n) {
        tail.add(inHead == 0 ? p : p.groups(inHead, n));
      }
      seen += n;
    }
    return List.of(head, tail);
  }

  private ChunkBatch part(List<Piece> some) {
    long lo = Long.MAX_VALUE;
    long hi = 0;
    long partRows = 0;
    for (Piece p : some) {
      for (int i = 0; i < p.at().length; i++) {
        lo = Math.min(lo, p.at()[i]);
        hi = Math.max(hi, p.at()[i] + p.lengths()[i]);
      }
      partRows += p.rows();
    }
    long from = lo == Long.MAX_VALUE ? 0 : lo;
    List<Piece> moved = new ArrayList<>();
    for (Piece p : some) {
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
        closeReaders(pieces); // a part's readers are the whole batch's
      }
      pieces = null;
    } finally {
      release.run();
    }
  }

  /** Closes every piece's reader, each even when one before it failed. */
  public static void closeReaders(List<Piece> pieces) {
    RuntimeException first = null;
    for (Piece p : pieces) {
      try {
        p.reader().close();
      } catch (RuntimeException e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
