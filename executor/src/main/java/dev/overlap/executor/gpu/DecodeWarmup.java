package dev.overlap.executor.gpu;

import ai.rapids.cudf.ByteRange;
import ai.rapids.cudf.CompressionType;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.HostBufferConsumer;
import ai.rapids.cudf.HostMemoryBuffer;
import ai.rapids.cudf.HybridScanReader;
import ai.rapids.cudf.ParquetOptions;
import ai.rapids.cudf.ParquetWriterOptions;
import ai.rapids.cudf.Table;
import ai.rapids.cudf.TableWriter;
import dev.overlap.executor.resource.Closing;
import dev.overlap.executor.trace.Diagnostics;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first Parquet decode in a process loads cuDF's decode kernels, which takes seconds: this runs
 * one on a tiny in-memory file on a thread of its own when the executor starts, so that no task
 * pays for it. Its failure is logged and changes nothing else.
 */
public final class DecodeWarmup {
  private static final Logger LOG = LoggerFactory.getLogger(DecodeWarmup.class);

  /** Its time: to the run's log only (conf/log4j2.properties), not to the terminal. */
  private static final Logger TIMES = Diagnostics.logger(DecodeWarmup.class);

  private DecodeWarmup() {}

  /** Starts the warm-up on {@code device}; the returned thread may be joined before shutdown. */
  static Thread start(int device) {
    Thread t =
        new Thread(
            () -> {
              long start = System.nanoTime();
              try {
                Cuda.setDevice(device);
                run();
                TIMES.info(
                    "Parquet decode warmed up in {} ms", (System.nanoTime() - start) / 1000000);
              } catch (RuntimeException | Error e) {
                LOG.warn("Parquet decode warm-up failed (the first decode will be slower)", e);
              }
            },
            "overlap-decode-warmup");
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static void run() {
    ByteArrayOutputStream file = new ByteArrayOutputStream();
    HostBufferConsumer sink =
        (buffer, length) -> {
          try (buffer) {
            byte[] b = new byte[(int) length];
            buffer.getBytes(b, 0, 0, length);
            file.write(b, 0, b.length);
          }
        };
    ParquetWriterOptions options =
        ParquetWriterOptions.builder()
            .withNullableColumns("i", "l", "d", "s")
            .withNullableDecimalColumn("m", 12)
            .withCompressionType(CompressionType.SNAPPY)
            .build();
    try (Table t =
            new Table.TestBuilder()
                .column(1, null, 3)
                .column(1L, 2L, null)
                .column(1.5, null, 2.5)
                .column("a", "bb", null)
                .decimal64Column(-2, 100L, null, 250L)
                .build();
        TableWriter w = Table.writeParquetChunked(options, sink)) {
      w.write(t);
    }
    byte[] bytes = file.toByteArray();
    int length =
        ByteBuffer.wrap(bytes, bytes.length - 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
    List<AutoCloseable> made = new ArrayList<>();
    try (HostMemoryBuffer footer = HostMemoryBuffer.allocate(length, false);
        HostMemoryBuffer all = HostMemoryBuffer.allocate(bytes.length, false)) {
      footer.setBytes(0, bytes, bytes.length - 8 - length, length);
      all.setBytes(0, bytes, 0, bytes.length);
      ParquetOptions read =
          ParquetOptions.builder().withTimeUnit(DType.TIMESTAMP_MICROSECONDS).build();
      try (HybridScanReader reader = new HybridScanReader(footer, read)) {
        int[] groups = reader.allRowGroups();
        ByteRange[] ranges = reader.allColumnChunksByteRanges(groups);
        DeviceMemoryBuffer[] chunks = new DeviceMemoryBuffer[ranges.length];
        for (int i = 0; i < ranges.length; i++) {
          chunks[i] = DeviceMemoryBuffer.allocate(ranges[i].size());
          made.add(chunks[i]);
          chunks[i].copyFromHostBuffer(0, all, ranges[i].offset(), ranges[i].size());
        }
        try (Table decoded = reader.materializeAllColumns(groups, chunks)) {
          if (decoded.getRowCount() != 3) {
            throw new IllegalStateException("decoded " + decoded.getRowCount() + " rows, not 3");
          }
        }
      }
    } finally {
      Closing.all(made);
    }
  }
}
