package dev.overlap.executor.input.parquet;

import ai.rapids.cudf.ByteRange;
import ai.rapids.cudf.HybridScanReader;
import dev.overlap.executor.input.parquet.delta.DeletedRows;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The chunks of one file in a {@link ChunkBatch}, and how its decode reads them.
 *
 * @param reader decodes them; built from the file's footer with its columns selected
 * @param rowGroups the row groups, indices in the file
 * @param groupRows rows in each of those row groups
 * @param at where each chunk starts in the batch's buffer, in the order the reader wants them
 * @param lengths each chunk's length
 * @param fileOffsets where each chunk starts in the file
 * @param rows rows in those row groups
 * @param columns how the decoded columns answer the kernel's input
 * @param split the file's split, for messages and to remember a file cuDF could not decode
 * @param freshReader builds another reader like {@code reader}: a reader decodes its row groups
 *     once, and a decode that runs again (after running out of device memory, or for part of a
 *     split batch) takes a reader of its own
 * @param decoded whether {@code reader} has decoded already; shared by the pieces cut from this
 *     one, which use the same reader
 * @param deleted the rows of the file its Delta table deleted, dropped once decoded; null when none
 *     are
 */
public record ChunkPiece(
    HybridScanReader reader,
    int[] rowGroups,
    long[] groupRows,
    long[] at,
    long[] lengths,
    long[] fileOffsets,
    long rows,
    FileColumns columns,
    FileSplit split,
    Supplier<HybridScanReader> freshReader,
    AtomicBoolean decoded,
    DeletedRows deleted) {

  /** The file's path. */
  public String file() {
    return split.path();
  }

  /**
   * The files of {@code pieces}, each once, in order, for messages: "file F", "files F, G", or
   * "files F, G and 3 more"; empty for none.
   */
  static String files(List<ChunkPiece> pieces) {
    List<String> names = pieces.stream().map(ChunkPiece::file).distinct().toList();
    if (names.isEmpty()) {
      return "";
    }
    String shown = String.join(", ", names.subList(0, Math.min(2, names.size())));
    String rest = names.size() > 2 ? " and " + (names.size() - 2) + " more" : "";
    return (names.size() == 1 ? "file " : "files ") + shown + rest;
  }

  /** The same chunks, {@code by} bytes earlier in their buffer. */
  ChunkPiece moved(long by) {
    long[] a = at.clone();
    for (int i = 0; i < a.length; i++) {
      a[i] -= by;
    }
    return new ChunkPiece(
        reader,
        rowGroups,
        groupRows,
        a,
        lengths,
        fileOffsets,
        rows,
        columns,
        split,
        freshReader,
        decoded,
        deleted);
  }

  /**
   * The chunks of row groups {@code [from, to)} of this piece (indices into {@link #rowGroups}),
   * where they lie in the same buffer, in the order the reader wants them for those groups.
   *
   * @throws IllegalStateException when the reader asks for a chunk this piece does not hold
   */
  public ChunkPiece groups(int from, int to) {
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
    return new ChunkPiece(
        reader,
        groups,
        rowsOf,
        partAt,
        partLengths,
        partOffsets,
        n,
        columns,
        split,
        freshReader,
        decoded,
        deleted);
  }

  private int indexOf(long offset, long size) {
    for (int k = 0; k < fileOffsets.length; k++) {
      if (fileOffsets[k] == offset && lengths[k] == size) {
        return k;
      }
    }
    throw new IllegalStateException(
        file() + ": the reader asks for a chunk at " + offset + " that the batch did not read");
  }

  /**
   * The row groups of {@code pieces} in two halves, in order (the first has the extra one), each
   * piece cut where the halves meet; empty for a single row group.
   */
  static List<List<ChunkPiece>> byRowGroups(List<ChunkPiece> pieces) {
    int groups = pieces.stream().mapToInt(p -> p.rowGroups().length).sum();
    if (groups < 2) {
      return List.of();
    }
    int firstHalf = (groups + 1) / 2;
    List<ChunkPiece> head = new ArrayList<>();
    List<ChunkPiece> tail = new ArrayList<>();
    int seen = 0;
    for (ChunkPiece p : pieces) {
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

  /** Closes every piece's reader, each even when one before it failed. */
  public static void closeReaders(List<ChunkPiece> pieces) {
    RuntimeException first = null;
    for (ChunkPiece p : pieces) {
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
