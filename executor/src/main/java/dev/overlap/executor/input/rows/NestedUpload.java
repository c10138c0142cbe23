package dev.overlap.executor.input.rows;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.ColumnView;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.HostColumnVectorCore;
import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.resource.Closing;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The upload of one nested host column (a list, struct, map or binary, children to any depth) into
 * a slice of its batch's device allocation, each buffer copied asynchronously on the copy stream:
 * the same single allocation and copy stream as the batch's flat columns.
 *
 * <p>Per level, in order: the validity mask (only when the level has nulls), the offsets (lists and
 * strings: {@code rows + 1} 32-bit offsets), the data (fixed-width leaves and strings' bytes); each
 * region aligned like the staging layout's ({@link BatchLayout#align}).
 *
 * <p>Ownership: the returned column owns its slices of the allocation, its children's included
 * (cuDF's {@code toClose}); the child views built on the way are closed before it returns.
 */
final class NestedUpload {
  private NestedUpload() {}

  /** Device bytes {@code c} takes, its children's included, each region aligned. */
  static long deviceBytes(HostColumnVectorCore c) {
    long total = 0;
    for (long len : regions(c)) {
      total += BatchLayout.align(Math.max(1, len));
    }
    return total;
  }

  /** Bytes copied to the device for {@code c}, its children's included. */
  static long copyBytes(HostColumnVectorCore c) {
    long total = 0;
    for (long len : regions(c)) {
      total += len;
    }
    return total;
  }

  /** The lengths of {@code c}'s regions, children's included, in upload order. */
  private static List<Long> regions(HostColumnVectorCore c) {
    List<Long> out = new ArrayList<>();
    addRegions(c, out);
    return out;
  }

  private static void addRegions(HostColumnVectorCore c, List<Long> out) {
    if (hasValidity(c)) {
      out.add(validityLength(c));
    }
    if (c.getOffsets() != null) {
      out.add(offsetsLength(c));
    }
    if (c.getData() != null && !c.getType().isNestedType()) {
      out.add(dataLength(c));
    }
    for (int i = 0; i < c.getNumChildren(); i++) {
      addRegions(c.getChildColumnView(i), out);
    }
  }

  /**
   * Queues the copies of {@code c} into {@code all} from offset {@code at[0]}, which it moves past
   * what it used, and makes the device column over them.
   *
   * @param made where slices are tracked until a column owns them; on failure the caller closes
   *     what is left there, after the stream has finished
   */
  static ColumnVector upload(
      HostColumnVectorCore c,
      DeviceMemoryBuffer all,
      long[] at,
      Cuda.Stream stream,
      List<AutoCloseable> made) {
    List<DeviceMemoryBuffer> childBuffers = new ArrayList<>();
    List<ColumnView> views = new ArrayList<>();
    try {
      DeviceMemoryBuffer valid =
          hasValidity(c) ? copy(c.getValidity(), validityLength(c), all, at, stream, made) : null;
      DeviceMemoryBuffer offsets =
          c.getOffsets() != null
              ? copy(c.getOffsets(), offsetsLength(c), all, at, stream, made)
              : null;
      long[] handles = new long[c.getNumChildren()];
      for (int i = 0; i < handles.length; i++) {
        ColumnView child =
            view(c.getChildColumnView(i), all, at, stream, made, childBuffers, views);
        handles[i] = child.getNativeView();
      }
      ColumnVector out =
          new ColumnVector(
              c.getType(),
              c.getRowCount(),
              Optional.of(c.getNullCount()),
              null,
              valid,
              offsets,
              childBuffers,
              handles);
      // The column owns its slices and its children's now.
      made.remove(valid);
      made.remove(offsets);
      made.removeAll(childBuffers);
      return out;
    } finally {
      Closing.all(views);
    }
  }

  /** A view of child {@code c} over slices it copies into; its slices are added to {@code own}. */
  private static ColumnView view(
      HostColumnVectorCore c,
      DeviceMemoryBuffer all,
      long[] at,
      Cuda.Stream stream,
      List<AutoCloseable> made,
      List<DeviceMemoryBuffer> own,
      List<ColumnView> views) {
    DeviceMemoryBuffer valid =
        hasValidity(c)
            ? own(copy(c.getValidity(), validityLength(c), all, at, stream, made), own)
            : null;
    DeviceMemoryBuffer offsets =
        c.getOffsets() != null
            ? own(copy(c.getOffsets(), offsetsLength(c), all, at, stream, made), own)
            : null;
    Optional<Long> nulls = Optional.of(c.getNullCount());
    ColumnView v;
    if (c.getType().isNestedType()) {
      ColumnView[] kids = new ColumnView[c.getNumChildren()];
      for (int i = 0; i < kids.length; i++) {
        kids[i] = view(c.getChildColumnView(i), all, at, stream, made, own, views);
      }
      v = new ColumnView(c.getType(), c.getRowCount(), nulls, valid, offsets, kids);
    } else {
      DeviceMemoryBuffer data =
          c.getData() != null
              ? own(copy(c.getData(), dataLength(c), all, at, stream, made), own)
              : null;
      v = new ColumnView(c.getType(), c.getRowCount(), nulls, data, valid, offsets);
    }
    views.add(v);
    return v;
  }

  private static DeviceMemoryBuffer own(DeviceMemoryBuffer b, List<DeviceMemoryBuffer> own) {
    own.add(b);
    return b;
  }

  /** A slice of {@code all} at {@code at[0]} holding {@code len} bytes of {@code src}, queued. */
  private static DeviceMemoryBuffer copy(
      HostMemoryBuffer src,
      long len,
      DeviceMemoryBuffer all,
      long[] at,
      Cuda.Stream stream,
      List<AutoCloseable> made) {
    long room = Math.max(1, len);
    DeviceMemoryBuffer s = all.slice(at[0], room);
    made.add(s);
    if (len > 0) {
      all.copyFromHostBufferAsync(at[0], src, 0, len, stream);
    }
    at[0] += BatchLayout.align(room);
    return s;
  }

  private static boolean hasValidity(HostColumnVectorCore c) {
    return c.getValidity() != null && c.getNullCount() > 0;
  }

  private static long validityLength(HostColumnVectorCore c) {
    return Math.min(c.getValidity().getLength(), (c.getRowCount() + 7) / 8);
  }

  private static long offsetsLength(HostColumnVectorCore c) {
    return Math.min(c.getOffsets().getLength(), 4L * (c.getRowCount() + 1));
  }

  private static long dataLength(HostColumnVectorCore c) {
    HostMemoryBuffer data = c.getData();
    DType t = c.getType();
    long len =
        t.equals(DType.STRING)
            ? (c.getRowCount() == 0 ? 0 : c.getOffsets().getInt(4L * c.getRowCount()))
            : c.getRowCount() * t.getSizeInBytes();
    return Math.min(data.getLength(), len);
  }
}
