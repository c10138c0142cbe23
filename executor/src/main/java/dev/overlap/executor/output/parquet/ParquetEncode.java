package dev.overlap.executor.output.parquet;

import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostMemoryBuffer;
import ai.rapids.cudf.ParquetWriterOptions;
import ai.rapids.cudf.Table;
import ai.rapids.cudf.TableWriter;
import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.compute.DeclaredOutput;
import dev.overlap.executor.compute.DeviceResult;
import dev.overlap.executor.gpu.DeviceMemory;
import dev.overlap.executor.gpu.ResultMemory;
import dev.overlap.executor.pipeline.Download;
import dev.overlap.executor.pipeline.OutOfDeviceMemoryException;
import dev.overlap.executor.resource.Closing;
import dev.overlap.executor.types.NestedTypes;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.types.StructType;

/**
 * The download of the Parquet output mode, one per task: it encodes the kernel's output with cuDF's
 * chunked Parquet writer on the device and brings back only the encoded bytes, into pinned host
 * buffers while the pinned pool has room ({@link EncodedParquet}). cuDF's writer encodes and copies
 * in one call, on the download thread: a batch is encoded while the next one's kernel runs.
 *
 * <p>The task's current file is open in cuDF's writer between batches. A file ends when it reached
 * {@link ParquetOutput#rowsPerFile} rows (at a batch's end), or when the task's thread calls {@link
 * #finish} after its last result; ending a file writes its footer (rewritten by {@link
 * FooterRewrite} when the schema has timestamps without time zone). {@link #close} (the task's end,
 * whatever it was) drops an open file; the task's commit protocol deletes what it wrote.
 *
 * <p>Thread safety: {@link #download}, {@link #finish} and {@link #close} hold this object's lock,
 * so that a task ending on its own thread never closes the writer under a running encode.
 */
public final class ParquetEncode implements Download<DeviceResult, EncodedParquet>, AutoCloseable {
  private final StructType schema;
  private final ParquetWriterOptions options;
  private final boolean[] localTimestamps;
  private final boolean anyLocal;
  private final long rowsPerFile;
  private final String producer;
  // What cuDF's writer handed back since the last result: owned here until then.
  private final List<HostMemoryBuffer> buffers = new ArrayList<>();
  private final List<Long> lengths = new ArrayList<>();
  private TableWriter writer;
  private long rowsInFile;
  private long files;
  private boolean closed;

  /**
   * @param producer names the kernel in messages
   */
  public ParquetEncode(StructType schema, ParquetOutput output, String producer) {
    this.schema = schema;
    this.options = ParquetWriterSchema.options(schema, output);
    this.localTimestamps = ParquetWriterSchema.localTimestamps(schema);
    boolean any = false;
    for (boolean b : localTimestamps) {
      any |= b;
    }
    this.anyLocal = any;
    this.rowsPerFile = output.rowsPerFile();
    this.producer = producer;
  }

  @Override
  public String doing() {
    return "Parquet encode";
  }

  @Override
  public synchronized EncodedParquet download(DeviceResult result) {
    if (closed) {
      throw new IllegalStateException(producer + ": the task's Parquet output is closed");
    }
    result.awaitComputed();
    Table t = result.output();
    checkTypes(t);
    try {
      if (writer == null) {
        writer = Table.writeParquetChunked(options, this::take, ResultMemory.pinnedFirst());
        rowsInFile = 0;
        files++;
      }
      writer.write(t);
      rowsInFile += t.getRowCount();
      boolean ends = rowsPerFile > 0 && rowsInFile >= rowsPerFile;
      byte[] tail = ends ? endFile() : null;
      return drain(t.getRowCount(), ends, tail);
    } catch (RuntimeException | Error e) {
      // The file is broken: the task fails, and its commit protocol deletes what it wrote.
      drop(e);
      throw encodeFailure(e);
    }
  }

  /**
   * Ends the task's open file, if any: the bytes that complete it (its footer). Called on the
   * task's thread after its last result.
   *
   * @return null when no file is open
   */
  public synchronized EncodedParquet finish() {
    if (closed) {
      throw new IllegalStateException(producer + ": the task's Parquet output is closed");
    }
    if (writer == null) {
      return null;
    }
    try {
      byte[] tail = endFile();
      return drain(0, true, tail);
    } catch (RuntimeException | Error e) {
      drop(e);
      throw encodeFailure(e);
    }
  }

  /**
   * A failed device allocation in cuDF's writer becomes one line, with cuDF's {@code
   * OutOfMemoryError} kept as suppressed, not as cause: Spark's executor would exit on it (see
   * {@link OutOfDeviceMemoryException}). The encode is not retried or split; anything else is
   * thrown as it is.
   */
  private RuntimeException encodeFailure(Throwable e) {
    return encodeFailure(producer, e);
  }

  static RuntimeException encodeFailure(String producer, Throwable e) {
    String what = DeviceMemory.describe(producer + "'s Parquet encode", -1, e);
    if (what == null) {
      if (e instanceof Error err) {
        throw err;
      }
      return (RuntimeException) e;
    }
    return new OutOfDeviceMemoryException(
        "out of device memory: "
            + what
            + ", which is not split; device free "
            + DeviceMemory.freeBytes()
            + " bytes; write smaller batches (spark.overlap.batch.maxRows,"
            + " spark.overlap.parquet.batchBytes)",
        e);
  }

  /** Files this task began. */
  public synchronized long files() {
    return files;
  }

  /** Drops an open file and what was not handed on. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    drop(null);
  }

  private void drop(Throwable failure) {
    // Cleared before the close, here and in endFile: cuDF's close deletes its native writer even
    // when it throws, but then keeps the handle, and a second close would delete it again.
    TableWriter w = writer;
    writer = null;
    try {
      try {
        if (w != null) {
          // Closing cuDF's writer ends the file: it hands its last buffers to take(), so the
          // buffers are freed after it.
          w.close();
        }
      } finally {
        List<AutoCloseable> all = new ArrayList<>(buffers);
        buffers.clear();
        lengths.clear();
        Closing.all(all);
      }
    } catch (RuntimeException | Error e) {
      if (failure == null) {
        throw e;
      }
      failure.addSuppressed(e);
    }
  }

  /**
   * cuDF's writer hands over a buffer it filled; this object owns it from now on. Called from
   * inside cuDF's native write, so it only keeps the buffer: the task's thread writes the bytes out
   * later ({@link EncodedParquet#writeTo}). An exception here would unwind through cuDF's sink,
   * which keeps that buffer as its current one and would hand it over again at the close.
   */
  private void take(HostMemoryBuffer buffer, long length) {
    buffers.add(buffer);
    lengths.add(length);
  }

  /**
   * Closes cuDF's writer, which writes the file's end. Returns what it wrote then as bytes, with
   * the footer rewritten for timestamps without time zone; null when there are none.
   */
  private byte[] endFile() {
    int before = buffers.size();
    TableWriter w = writer;
    writer = null;
    w.close();
    if (!anyLocal) {
      return null;
    }
    ByteArrayOutputStream end = new ByteArrayOutputStream();
    for (int i = before; i < buffers.size(); i++) {
      int n = Math.toIntExact(lengths.get(i));
      byte[] b = new byte[n];
      buffers.get(i).getBytes(b, 0, 0, n);
      end.write(b, 0, n);
    }
    List<HostMemoryBuffer> written = new ArrayList<>(buffers.subList(before, buffers.size()));
    buffers.subList(before, buffers.size()).clear();
    lengths.subList(before, lengths.size()).clear();
    Closing.all(written);
    return FooterRewrite.markLocalTimestamps(end.toByteArray(), localTimestamps);
  }

  private EncodedParquet drain(long rows, boolean ends, byte[] tail) {
    List<HostMemoryBuffer> out = new ArrayList<>(buffers);
    long[] lens = lengths.stream().mapToLong(Long::longValue).toArray();
    buffers.clear();
    lengths.clear();
    return new EncodedParquet(out, lens, tail, rows, ends);
  }

  private void checkTypes(Table t) {
    DType[] actual = new DType[t.getNumberOfColumns()];
    for (int c = 0; c < actual.length; c++) {
      actual[c] = t.getColumn(c).getType();
    }
    DeclaredOutput.check(schema, actual, producer);
    for (int c = 0; c < actual.length; c++) {
      DeclaredOutput.checkNested(schema.fields()[c], NestedTypes.of(t.getColumn(c)), producer);
    }
  }
}
