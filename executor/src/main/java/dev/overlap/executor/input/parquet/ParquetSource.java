package dev.overlap.executor.input.parquet;

import ai.rapids.cudf.ByteRange;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostMemoryBuffer;
import ai.rapids.cudf.HybridScanReader;
import ai.rapids.cudf.ParquetOptions;
import dev.overlap.executor.pipeline.BatchSource;
import dev.overlap.executor.resource.PinnedShare;
import dev.overlap.executor.trace.Diagnostics;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.conf.Configuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A task's Parquet input for the GPU to decode: row groups of its file splits, gathered in file
 * order into batches of at most {@code batchBytes} compressed bytes and {@code maxRows} rows, their
 * projected column chunks read with positional reads into the staging buffer. A row group larger
 * than a staging buffer gets a buffer of its own.
 */
public final class ParquetSource implements BatchSource<HostMemoryBuffer, ChunkBatch> {
  private static final Logger LOG = LoggerFactory.getLogger(ParquetSource.class);

  /**
   * Every row group larger than a staging buffer after this JVM's first: to the run's log only
   * (conf/log4j2.properties).
   */
  private static final Logger DETAIL = Diagnostics.logger(ParquetSource.class);

  /** Whether this JVM said once that a row group is larger than a staging buffer. */
  private static final AtomicBoolean LARGE_GROUP_SAID = new AtomicBoolean();

  private final List<FilePlan> files;
  private final Configuration conf;
  private final long batchBytes;
  private final long maxRows;
  private final LongAdder decodeNanos = new LongAdder();
  private int file;
  private int nextGroup;
  private long rowsRead;
  private long filesRead;
  private long rowGroupsRead;
  private long compressedRead;

  /**
   * @param batchBytes most compressed bytes in a batch; 0 or more than a staging buffer means the
   *     staging buffer's size
   */
  public ParquetSource(List<FilePlan> files, Configuration conf, long batchBytes, long maxRows) {
    this.files = files;
    this.conf = conf;
    this.batchBytes = batchBytes;
    this.maxRows = maxRows;
    skipEmpty();
  }

  private void skipEmpty() {
    while (file < files.size() && nextGroup >= files.get(file).rowGroups().length) {
      file++;
      nextGroup = 0;
    }
  }

  @Override
  public ChunkBatch fill(HostMemoryBuffer staging, Runnable release) {
    HostMemoryBuffer buffer = staging;
    Runnable giveBack = release;
    List<ChunkPiece> pieces = new ArrayList<>();
    try {
      long cap = batchBytes <= 0 ? staging.getLength() : Math.min(batchBytes, staging.getLength());
      long used = 0;
      long rows = 0;
      long device = 0;
      long deleted = 0;
      while (file < files.size()) {
        FilePlan plan = files.get(file);
        int[] groups = plan.rowGroups();
        int from = nextGroup;
        int to = from;
        // The pieces lie back to back: this file's chunks start where the bytes so far end (read
        // checks that it reads exactly the bytes the footer gives, which is what used adds up).
        long at = used;
        while (to < groups.length) {
          long b = plan.compressedBytes(groups[to]);
          long r = plan.rows(groups[to]);
          boolean empty = used == 0 && to == from && pieces.isEmpty();
          if (!empty && (used + b > cap || rows + r > maxRows)) {
            break;
          }
          if (empty && b > buffer.getLength()) {
            // One row group larger than a staging buffer: a buffer of its own.
            HostMemoryBuffer own = allocate(b);
            // Once on the terminal, with what to do about it; every one in the log.
            boolean first = LARGE_GROUP_SAID.compareAndSet(false, true);
            (first ? LOG : DETAIL)
                .info(
                    "{}: row group {} has {} compressed bytes of the columns read, more than a"
                        + " staging buffer ({}); reading it into a buffer of its own{}",
                    plan.split().fileName(),
                    groups[to],
                    b,
                    buffer.getLength(),
                    first
                        ? " (so are other such row groups, each logged at INFO as "
                            + DETAIL.getName()
                            + "; spark.overlap.staging.bufferSize sets the buffers' size)"
                        : "");
            giveBack.run();
            buffer = own;
            giveBack = own::close;
            cap = b;
          }
          used += b;
          rows += r;
          device += b + plan.decodedBytes(groups[to]);
          to++;
        }
        if (to == from) {
          break;
        }
        int[] take = java.util.Arrays.copyOfRange(groups, from, to);
        pieces.add(read(plan, take, buffer, at));
        deleted += plan.deleted() == null ? 0 : plan.deleted().count(take); // dropped once decoded
        if (from == 0) {
          filesRead++;
        }
        rowGroupsRead += take.length;
        nextGroup = to;
        skipEmpty();
        if (nextGroup != 0) {
          break; // this file has more row groups than fit
        }
      }
      rowsRead += rows - deleted;
      compressedRead += used;
      return new ChunkBatch(buffer, giveBack, pieces, rows, used, device, decodeNanos);
    } catch (IOException e) {
      drop(pieces, giveBack, e);
      throw new UncheckedIOException(e);
    } catch (RuntimeException | Error e) {
      drop(pieces, giveBack, e);
      throw e;
    }
  }

  /** Closes what a failed fill made and gives its buffer back. */
  private static void drop(List<ChunkPiece> pieces, Runnable giveBack, Throwable failure) {
    try {
      ChunkPiece.closeReaders(pieces);
    } catch (RuntimeException c) {
      failure.addSuppressed(c);
    }
    giveBack.run();
  }

  private static HostMemoryBuffer allocate(long bytes) {
    HostMemoryBuffer b = PinnedShare.tryPinned(bytes);
    return b != null ? b : HostMemoryBuffer.allocate(bytes, false);
  }

  /** Reads the chunks of {@code groups} of one file into {@code buffer} from {@code at} on. */
  private ChunkPiece read(FilePlan plan, int[] groups, HostMemoryBuffer buffer, long at)
      throws IOException {
    HybridScanReader reader = reader(plan);
    try {
      ByteRange[] ranges = reader.allColumnChunksByteRanges(groups);
      long[] starts = new long[ranges.length];
      long[] lengths = new long[ranges.length];
      long[] offsets = new long[ranges.length];
      long expected = 0;
      for (int g : groups) {
        expected += plan.compressedBytes(g);
      }
      long total = 0;
      try (ChunkReader in = new ChunkReader(plan.split().path(), conf)) {
        int i = 0;
        while (i < ranges.length) {
          // Chunks that follow each other in the file are read with one call.
          int j = i + 1;
          long run = ranges[i].size();
          while (j < ranges.length
              && ranges[j].offset() == ranges[j - 1].offset() + ranges[j - 1].size()) {
            run += ranges[j].size();
            j++;
          }
          in.read(ranges[i].offset(), buffer, at + total, run);
          for (int k = i; k < j; k++) {
            starts[k] = at + total;
            lengths[k] = ranges[k].size();
            offsets[k] = ranges[k].offset();
            total += ranges[k].size();
          }
          i = j;
        }
      }
      if (total != expected) {
        throw new IllegalStateException(
            plan.split().fileName()
                + ": cuDF asks for "
                + total
                + " bytes of row groups "
                + java.util.Arrays.toString(groups)
                + ", the footer says "
                + expected);
      }
      LevelCheck.chunks(plan, groups, ranges, starts, buffer, conf);
      long[] groupRows = new long[groups.length];
      for (int i = 0; i < groups.length; i++) {
        groupRows[i] = plan.rows(groups[i]);
      }
      return new ChunkPiece(
          reader,
          groups,
          groupRows,
          starts,
          lengths,
          offsets,
          java.util.Arrays.stream(groupRows).sum(),
          plan.columns(),
          plan.split(),
          () -> reader(plan),
          new java.util.concurrent.atomic.AtomicBoolean(),
          plan.deleted());
    } catch (IOException | RuntimeException | Error e) {
      reader.close();
      throw e;
    }
  }

  /** A cuDF reader of {@code plan}'s file with the columns read selected. */
  static HybridScanReader reader(FilePlan plan) {
    return reader(footerFor(plan), columnsFor(plan));
  }

  /**
   * The footer the reader of {@code plan} is built from: the file's, or for a file whose nested
   * columns are read but not all its columns, the file's cut down to the columns read ({@link
   * FooterProjection}). cuDF's hybrid reader decodes nested columns only when it selects none.
   */
  public static byte[] footerFor(FilePlan plan) {
    FileColumns c = plan.columns();
    if (!c.nested() || c.wholeFile()) {
      return plan.footer().bytes();
    }
    return plan.footer().projected(c.include());
  }

  /** The columns the reader of {@code plan} selects: none when nested columns are read. */
  public static String[] columnsFor(FilePlan plan) {
    return plan.columns().nested() ? null : plan.columns().include();
  }

  /** A cuDF reader of a file with footer {@code footer}, reading {@code columns} (null: all). */
  public static HybridScanReader reader(byte[] footer, String[] columns) {
    ParquetOptions.Builder b = ParquetOptions.builder().withTimeUnit(DType.TIMESTAMP_MICROSECONDS);
    if (columns != null) {
      b.includeColumn(columns);
    }
    ParquetOptions options = b.build();
    try (HostMemoryBuffer f = HostMemoryBuffer.allocate(footer.length, false)) {
      f.setBytes(0, footer, 0, footer.length);
      return new HybridScanReader(f, options);
    }
  }

  @Override
  public boolean more() {
    return file < files.size();
  }

  /** Rows of the input read so far; a Delta table's deleted rows are not counted. */
  @Override
  public long rowsRead() {
    return rowsRead;
  }

  public long filesRead() {
    return filesRead;
  }

  public long rowGroupsRead() {
    return rowGroupsRead;
  }

  public long compressedBytesRead() {
    return compressedRead;
  }

  /** Time the GPU spent decoding this task's batches so far. */
  public long decodeNanos() {
    return decodeNanos.sum();
  }
}
