package dev.overlap.executor.input.rows;

import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.resource.Closing;
import java.util.ArrayList;
import java.util.List;

/**
 * Cuts a packed batch into two runs of its rows, for an upload that did not fit in device memory.
 * The parts share the batch's staging buffer; each holds a reference to the batch, and a part that
 * does not start at row 0 holds its own string offsets, rebased to start at 0 as cuDF wants.
 */
final class RowHalves {
  private RowHalves() {}

  /**
   * The two halves of {@code batch}, the first a multiple of 8 rows long. Empty when the batch has
   * 8 rows or fewer: a part's validity masks start on a byte, so this is the smallest batch; and
   * when it has nested columns, whose host columns are not cut (their batches are bounded by bytes
   * when packed, see {@link HostBatchWriter}).
   */
  static List<HostBatch> of(HostBatch batch) {
    int rows = batch.rows();
    if (rows <= 8 || batch.anyNested()) {
      return List.of();
    }
    int k = Math.max(8, rows / 2 / 8 * 8);
    HostBatch head = part(batch, 0, k);
    try {
      return List.of(head, part(batch, k, rows - k));
    } catch (RuntimeException e) {
      throw Closing.after(e, List.of(head));
    } catch (Error e) {
      throw Closing.after(e, List.of(head));
    }
  }

  /** Rows {@code [from, from + n)}, {@code from} a multiple of 8, as a batch of their own. */
  private static HostBatch part(HostBatch b, int from, int n) {
    BatchLayout layout = b.layout();
    int cols = layout.columns();
    long[] nulls = new long[cols];
    long[] bytes = new long[cols];
    long[] start = new long[cols];
    HostMemoryBuffer[] in = new HostMemoryBuffer[cols];
    long[] at = new long[cols];
    List<HostMemoryBuffer> own = new ArrayList<>();
    try {
      for (int c = 0; c < cols; c++) {
        start[c] = b.stringStart(c);
        in[c] = b.offsetsBuffer(c);
        at[c] = b.offsetsOffset(c);
        nulls[c] = b.nullCount(c) == 0 ? 0 : nullsIn(b, c, from, n);
        if (layout.type(c).hasOffsets()) {
          HostMemoryBuffer o = in[c];
          long o0 = at[c];
          int base = o.getInt(o0 + 4L * from);
          bytes[c] = o.getInt(o0 + 4L * (from + n)) - base;
          start[c] += base;
          if (from > 0) {
            // cuDF wants offsets from 0: the part's own, rebased.
            HostMemoryBuffer r = HostMemoryBuffer.allocate(4L * (n + 1), false);
            own.add(r);
            for (int i = 0; i <= n; i++) {
              r.setInt(4L * i, o.getInt(o0 + 4L * (from + i)) - base);
            }
            in[c] = r;
            at[c] = 0;
          }
        }
      }
    } catch (RuntimeException e) {
      throw Closing.after(e, own);
    } catch (Error e) {
      throw Closing.after(e, own);
    }
    HostBatch whole = b.retain();
    Runnable release =
        () -> {
          try {
            Closing.all(own);
          } finally {
            whole.close();
          }
        };
    return b.part(from, n, nulls, bytes, start, in, at, release);
  }

  /** Nulls of column {@code c} in rows {@code [from, from + n)}, {@code from} a multiple of 8. */
  private static long nullsIn(HostBatch b, int c, int from, int n) {
    HostMemoryBuffer staging = b.staging();
    long mask = b.validityOffset(c) + from / 8;
    long valid = 0;
    int full = n / 8;
    for (int i = 0; i < full; i++) {
      valid += Integer.bitCount(staging.getByte(mask + i) & 0xFF);
    }
    if (n % 8 != 0) {
      valid += Integer.bitCount(staging.getByte(mask + full) & ((1 << (n % 8)) - 1));
    }
    return n - valid;
  }
}
