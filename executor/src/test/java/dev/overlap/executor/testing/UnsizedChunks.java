package dev.overlap.executor.testing;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.parquet.format.ColumnChunk;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.RowGroup;
import org.apache.parquet.format.Util;

/**
 * A Parquet file as DuckDB's writer made them until November 2022 (its bug 5209): every column
 * chunk's {@code total_uncompressed_size}, and every row group's {@code total_byte_size}, given as
 * 0. Pages and their headers are left as they were, so Spark's reader reads the same rows.
 */
public final class UnsizedChunks {
  private UnsizedChunks() {}

  /** Rewrites {@code file}'s footer in place so, dropping its Hadoop checksum; returns it. */
  public static Path of(Path file) throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    int tail = bytes.length - 8;
    int length = ByteBuffer.wrap(bytes, tail, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
    int start = tail - length;
    FileMetaData meta = Util.readFileMetaData(new ByteArrayInputStream(bytes, start, length));
    for (RowGroup g : meta.getRow_groups()) {
      g.setTotal_byte_size(0);
      for (ColumnChunk c : g.getColumns()) {
        c.getMeta_data().setTotal_uncompressed_size(0);
      }
    }
    ByteArrayOutputStream footer = new ByteArrayOutputStream();
    Util.writeFileMetaData(meta, footer);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(bytes, 0, start);
    footer.writeTo(out);
    out.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(footer.size()).array());
    out.write(bytes, tail + 4, 4);
    Files.write(file, out.toByteArray());
    // Hadoop's local file system would check the old bytes' checksum.
    Files.deleteIfExists(file.resolveSibling("." + file.getFileName() + ".crc"));
    return file;
  }
}
