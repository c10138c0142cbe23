package dev.overlap.executor.output.parquet;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.LogicalType;
import org.apache.parquet.format.SchemaElement;
import org.apache.parquet.format.Util;

/**
 * Rewrites the footer at the end of a Parquet file that cuDF wrote, where cuDF's Java writer cannot
 * say what Spark needs: it marks every timestamp column as adjusted to UTC, and a reader that takes
 * the type from the Parquet schema (Spark's, without the Spark schema in the file's metadata, or
 * another engine's) reads such a column as {@code timestamp}. The columns that hold timestamps
 * without time zone are marked {@code TIMESTAMP(isAdjustedToUTC=false, MICROS)}, as Spark's own
 * writer marks them. Only the footer changes, and it is the last thing in the file: every offset it
 * holds (into the row groups and page indexes before it) stays right.
 */
public final class FooterRewrite {
  private static final byte[] MAGIC = "PAR1".getBytes(StandardCharsets.US_ASCII);

  private FooterRewrite() {}

  /**
   * The file's last bytes with its footer rewritten.
   *
   * @param tail the file's last bytes, containing the whole footer, its length and the magic
   * @param localTimestamps for each top-level column, in order, whether it holds timestamps without
   *     time zone
   * @throws IllegalStateException when {@code tail} does not end with a whole footer
   */
  static byte[] markLocalTimestamps(byte[] tail, boolean[] localTimestamps) {
    int n = tail.length;
    if (n < 12 || !endsWithMagic(tail)) {
      throw new IllegalStateException("the Parquet writer's last bytes do not end its file");
    }
    int length = ByteBuffer.wrap(tail, n - 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
    int start = n - 8 - length;
    if (length <= 0 || start < 0) {
      throw new IllegalStateException(
          "the Parquet footer (" + length + " bytes) is not within the writer's last bytes");
    }
    try {
      FileMetaData meta = Util.readFileMetaData(new ByteArrayInputStream(tail, start, length));
      List<SchemaElement> schema = meta.getSchema();
      if (schema.size() != localTimestamps.length + 1) {
        throw new IllegalStateException(
            "the Parquet footer has "
                + (schema.size() - 1)
                + " columns, the output schema "
                + localTimestamps.length);
      }
      for (int i = 0; i < localTimestamps.length; i++) {
        SchemaElement e = schema.get(i + 1);
        if (!localTimestamps[i]) {
          continue;
        }
        LogicalType t = e.getLogicalType();
        if (t == null || !t.isSetTIMESTAMP()) {
          throw new IllegalStateException(
              "column " + e.getName() + " is not written as a Parquet timestamp");
        }
        t.getTIMESTAMP().setIsAdjustedToUTC(false);
        // The converted types all mean "adjusted to UTC"; Spark's writer leaves them out here.
        e.unsetConverted_type();
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream(n + 64);
      out.write(tail, 0, start);
      Util.writeFileMetaData(meta, out);
      int written = out.size() - start;
      out.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(written).array());
      out.write(MAGIC);
      return out.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException("could not rewrite the Parquet footer", e);
    }
  }

  private static boolean endsWithMagic(byte[] b) {
    for (int i = 0; i < 4; i++) {
      if (b[b.length - 4 + i] != MAGIC[i]) {
        return false;
      }
    }
    return true;
  }
}
