package dev.overlap.executor.output.parquet;

import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.pipeline.ResultBatch;
import dev.overlap.executor.resource.Closing;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Iterator;
import java.util.List;

/**
 * A run of a Parquet file's bytes, encoded on the device and copied back into host buffers: what
 * one batch added to its task's file, or the file's end (its footer). The task thread appends it to
 * the file with {@link #writeTo}; {@link #endsFile} says whether the file is complete after it.
 *
 * <p>Ownership: the buffers are this object's, freed by {@link #close}. As a {@link ResultBatch},
 * its one "row" is itself, valid until the task takes the next result.
 */
public final class EncodedParquet implements ResultBatch<EncodedParquet> {
  /** Bytes copied from host buffers to the output stream at a time. */
  private static final int COPY_BYTES = 1 << 20;

  private final List<HostMemoryBuffer> buffers;
  private final long[] lengths;
  private final byte[] tail;
  private final long rows;
  private final boolean endsFile;
  private boolean closed;

  /**
   * Takes ownership of {@code buffers}.
   *
   * @param lengths the bytes used in each buffer
   * @param tail bytes that follow the buffers' (the file's rewritten footer); may be null
   */
  EncodedParquet(
      List<HostMemoryBuffer> buffers, long[] lengths, byte[] tail, long rows, boolean endsFile) {
    this.buffers = buffers;
    this.lengths = lengths;
    this.tail = tail;
    this.rows = rows;
    this.endsFile = endsFile;
  }

  /** Rows of the kernel's output in these bytes (0 for a file's end). */
  public long rowCount() {
    return rows;
  }

  /** Whether the file is complete once these bytes are written. */
  public boolean endsFile() {
    return endsFile;
  }

  /** The bytes this holds. */
  public long bytes() {
    long n = tail == null ? 0 : tail.length;
    for (long l : lengths) {
      n += l;
    }
    return n;
  }

  /**
   * Appends the bytes to {@code out}, on the task's thread: cuDF's writer only handed the buffers
   * over, so a failed write (a full disk) throws here, after cuDF's call has returned, never from
   * inside it. Holds this object's lock, so that a {@link #close} from another thread waits rather
   * than free a buffer under the copy.
   *
   * @param scratch a buffer of at least 1 MiB to copy through, reused by the caller
   * @throws IllegalStateException once closed
   */
  public synchronized void writeTo(OutputStream out, byte[] scratch) throws IOException {
    if (closed) {
      throw new IllegalStateException("the encoded Parquet bytes were freed before being written");
    }
    for (int i = 0; i < buffers.size(); i++) {
      HostMemoryBuffer b = buffers.get(i);
      long at = 0;
      while (at < lengths[i]) {
        int n = (int) Math.min(Math.min(lengths[i] - at, scratch.length), COPY_BYTES);
        b.getBytes(scratch, 0, at, n);
        out.write(scratch, 0, n);
        at += n;
      }
    }
    if (tail != null) {
      out.write(tail);
    }
  }

  @Override
  public Iterator<EncodedParquet> rows() {
    return List.of(this).iterator();
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    Closing.all(buffers);
  }
}
