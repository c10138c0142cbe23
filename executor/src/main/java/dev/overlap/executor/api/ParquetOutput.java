package dev.overlap.executor.api;

import java.io.Serializable;
import java.util.Locale;
import java.util.Objects;

/**
 * Where and how {@link GpuPartitions#write} writes a kernel's output: a folder of Parquet files,
 * encoded on the GPU. Immutable; each {@code with} method returns a copy.
 *
 * <pre>{@code
 * GpuPartitions.write(df, new MyKernel(), ParquetOutput.to("s3a://bucket/out").withCompression("zstd"));
 * }</pre>
 *
 * <p>The folder must not exist yet, or be empty. Files are written through Spark's commit protocol
 * (task attempts write their own temporary files, the job's commit publishes them with {@code
 * _SUCCESS}), so the output appears whole or not at all. They carry the Spark schema, so that
 * {@code spark.read().parquet} reads back exactly the kernel's declared output types.
 */
@Public
public final class ParquetOutput implements Serializable {
  private static final long serialVersionUID = 1L;

  /** A row group is closed at this many rows unless {@link #withRowGroupRows} says otherwise. */
  public static final int DEFAULT_ROW_GROUP_ROWS = 1_000_000;

  /** A row group is closed at this many bytes unless {@link #withRowGroupBytes} says otherwise. */
  public static final long DEFAULT_ROW_GROUP_BYTES = 128L << 20;

  private final String path;
  private final String compression;
  private final int rowGroupRows;
  private final long rowGroupBytes;
  private final long rowsPerFile;

  private ParquetOutput(
      String path, String compression, int rowGroupRows, long rowGroupBytes, long rowsPerFile) {
    this.path = path;
    this.compression = compression;
    this.rowGroupRows = rowGroupRows;
    this.rowGroupBytes = rowGroupBytes;
    this.rowsPerFile = rowsPerFile;
  }

  /**
   * Output into the folder {@code path} (any Hadoop file system: local, HDFS, cloud stores), snappy
   * compressed, row groups of {@value #DEFAULT_ROW_GROUP_ROWS} rows or 128 MiB, one file per task.
   */
  public static ParquetOutput to(String path) {
    Objects.requireNonNull(path, "path");
    if (path.isBlank()) {
      throw new IllegalArgumentException("ParquetOutput: the output path is empty");
    }
    return new ParquetOutput(path, "snappy", DEFAULT_ROW_GROUP_ROWS, DEFAULT_ROW_GROUP_BYTES, 0);
  }

  /**
   * {@code snappy} (the default), {@code zstd} or {@code none} (also {@code uncompressed}), in any
   * case.
   *
   * @throws IllegalArgumentException for any other name, naming the ones accepted
   */
  public ParquetOutput withCompression(String codec) {
    String c = codec == null ? "" : codec.trim().toLowerCase(Locale.ROOT);
    if (c.equals("uncompressed")) {
      c = "none";
    }
    if (!c.equals("snappy") && !c.equals("zstd") && !c.equals("none")) {
      throw new IllegalArgumentException(
          "ParquetOutput: compression '"
              + codec
              + "' is not one the GPU writer has; use snappy, zstd or none");
    }
    return new ParquetOutput(path, c, rowGroupRows, rowGroupBytes, rowsPerFile);
  }

  /**
   * The most rows in a row group (at least 1000).
   *
   * @throws IllegalArgumentException below 1000
   */
  public ParquetOutput withRowGroupRows(int rows) {
    if (rows < 1000) {
      throw new IllegalArgumentException(
          "ParquetOutput: rowGroupRows " + rows + " is too small; give at least 1000");
    }
    return new ParquetOutput(path, compression, rows, rowGroupBytes, rowsPerFile);
  }

  /**
   * The most bytes in a row group, before compression (at least 1 MiB).
   *
   * @throws IllegalArgumentException below 1 MiB
   */
  public ParquetOutput withRowGroupBytes(long bytes) {
    if (bytes < (1L << 20)) {
      throw new IllegalArgumentException(
          "ParquetOutput: rowGroupBytes " + bytes + " is too small; give at least 1048576 (1 MiB)");
    }
    return new ParquetOutput(path, compression, rowGroupRows, bytes, rowsPerFile);
  }

  /**
   * A task starts a new file once its current one has at least this many rows (a file ends at a
   * batch's end); 0, the default, writes one file per task.
   *
   * @throws IllegalArgumentException when negative
   */
  public ParquetOutput withRowsPerFile(long rows) {
    if (rows < 0) {
      throw new IllegalArgumentException(
          "ParquetOutput: rowsPerFile " + rows + " is negative; give 0 for one file per task");
    }
    return new ParquetOutput(path, compression, rowGroupRows, rowGroupBytes, rows);
  }

  public String path() {
    return path;
  }

  /** {@code snappy}, {@code zstd} or {@code none}. */
  public String compression() {
    return compression;
  }

  public int rowGroupRows() {
    return rowGroupRows;
  }

  public long rowGroupBytes() {
    return rowGroupBytes;
  }

  /** 0 for one file per task. */
  public long rowsPerFile() {
    return rowsPerFile;
  }

  /** The files' name ending, as Spark names them: {@code .snappy.parquet}, {@code .parquet}. */
  public String extension() {
    return compression.equals("none") ? ".parquet" : "." + compression + ".parquet";
  }

  @Override
  public String toString() {
    return "ParquetOutput["
        + path
        + ", "
        + compression
        + ", row groups of "
        + rowGroupRows
        + " rows or "
        + rowGroupBytes
        + " bytes, "
        + (rowsPerFile == 0 ? "one file per task" : rowsPerFile + " rows per file")
        + "]";
  }
}
