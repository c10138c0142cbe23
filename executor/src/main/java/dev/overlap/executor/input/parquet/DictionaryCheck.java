package dev.overlap.executor.input.parquet;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.parquet.bytes.ByteBufferInputStream;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.compression.CompressionCodecFactory.BytesInputDecompressor;
import org.apache.parquet.format.PageHeader;
import org.apache.parquet.format.PageType;
import org.apache.parquet.format.Util;

/**
 * The check of a chunk's dictionary page on the host, before cuDF decodes it ({@link LevelCheck}
 * runs it on every chunk read): it decompresses to its stated size, and holds its values. A chunk
 * that fails is read on the host ({@link DecodeFailed}), where Spark's reader refuses it as Spark
 * does. Only the dictionary is decompressed here: the data pages are the GPU's.
 */
final class DictionaryCheck {
  private final ColumnDescriptor leaf;
  private final BytesInputDecompressor decompressor;

  /**
   * @param decompressor the chunk's codec's; null when it is uncompressed
   */
  DictionaryCheck(ColumnDescriptor leaf, BytesInputDecompressor decompressor) {
    this.leaf = leaf;
    this.decompressor = decompressor;
  }

  /**
   * Why the chunk's dictionary page, if it starts the chunk, cannot be decompressed; null when it
   * can or there is none. Seen on the H100 (DecodeFuzzGpuTest, seed 6): one flipped bit in a ZSTD
   * dictionary page, which Spark's reader refuses ("Truncated source"), ended cuDF's decode in an
   * illegal memory access.
   */
  String violation(ByteBuffer bytes) {
    try {
      ByteBufferInputStream in = ByteBufferInputStream.wrap(bytes.slice());
      PageHeader h = Util.readPageHeader(in);
      if (h.getType() != PageType.DICTIONARY_PAGE) {
        return null;
      }
      int size = h.getCompressed_page_size();
      if (size < 0 || size > in.available()) {
        return where() + " has a dictionary page of " + size + " bytes, past the chunk's end";
      }
      return page(h, in.slice(size));
    } catch (IOException | RuntimeException e) {
      return unreadable(where(), e);
    }
  }

  /**
   * Why a dictionary page does not decompress to its stated size, or holds fewer bytes than its
   * values need (PLAIN: 4-byte lengths and bytes, or fixed widths); or null.
   */
  String page(PageHeader h, ByteBuffer page) throws IOException {
    int expected = h.getUncompressed_page_size();
    ByteBuffer body = page;
    if (decompressor != null) {
      body = decompressor.decompress(BytesInput.from(page), expected).toByteBuffer();
    }
    if (body.remaining() != expected) {
      return where() + "'s dictionary page holds " + body.remaining() + " bytes, not " + expected;
    }
    int n = h.getDictionary_page_header().getNum_values();
    if (width() < 0) {
      return null;
    }
    long need = (long) n * width();
    if (width() == 0) { // BYTE_ARRAY: each value's length, then its bytes
      body = body.slice().order(ByteOrder.LITTLE_ENDIAN);
      need = 0;
      for (int i = 0; i < n && need >= 0; i++) {
        int length = need + 4 <= body.limit() ? body.getInt((int) need) : -1;
        need = length < 0 ? -1 : need + 4 + length;
      }
    }
    return need >= 0 && need <= body.remaining()
        ? null
        : where() + "'s dictionary of " + n + " values runs past its page";
  }

  /** The bytes of one PLAIN value of the leaf; 0 for BYTE_ARRAY, -1 for booleans. */
  private int width() {
    return switch (leaf.getPrimitiveType().getPrimitiveTypeName()) {
      case INT32, FLOAT -> 4;
      case INT64, DOUBLE -> 8;
      case INT96 -> 12;
      case FIXED_LEN_BYTE_ARRAY -> leaf.getPrimitiveType().getTypeLength();
      case BINARY -> 0;
      default -> -1; // BOOLEAN, never in a dictionary
    };
  }

  /**
   * A page header that does not parse, levels that end early, a page that does not decompress:
   * Spark's reader fails on them. One line naming the column.
   */
  static String unreadable(String where, Exception e) {
    String why = String.valueOf(e.getMessage()).lines().findFirst().orElse("").trim();
    return where + "'s pages cannot be read (" + e.getClass().getSimpleName() + ": " + why + ")";
  }

  private String where() {
    return "column " + String.join(".", leaf.getPath());
  }
}
