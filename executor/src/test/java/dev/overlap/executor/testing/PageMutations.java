package dev.overlap.executor.testing;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.parquet.format.ColumnChunk;
import org.apache.parquet.format.ColumnMetaData;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.PageHeader;
import org.apache.parquet.format.PageType;
import org.apache.parquet.format.RowGroup;
import org.apache.parquet.format.Util;

/**
 * Random damage to a valid Parquet file's pages, its length and footer kept, for the decode fuzzer:
 * a bit flipped in a page header, in a version 1 page's first bytes (its levels, where the page is
 * not compressed), or anywhere in a page's body (values, dictionary indices, string lengths); a
 * page's second half zeroed (a page cut short); a page header's value count off by one.
 */
public final class PageMutations {
  /** The kinds of damage. */
  public enum Kind {
    HEADER_BIT,
    LEVELS_BIT,
    BODY_BIT,
    CUT,
    VALUE_COUNT
  }

  /** Where a page lies in the file. */
  private record Page(long header, int headerLength, PageHeader h) {
    long body() {
      return header + headerLength;
    }
  }

  private PageMutations() {}

  /**
   * Damages one random page of {@code file} in place; returns what was done, in words (for the
   * fuzzer's report). Drops the file's Hadoop checksum.
   */
  public static String damage(Path file, Random rnd) throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    List<Page> pages = pages(bytes);
    Page p = pages.get(rnd.nextInt(pages.size()));
    Kind kind = Kind.values()[rnd.nextInt(Kind.values().length)];
    int size = p.h().getCompressed_page_size();
    String what;
    switch (kind) {
      case HEADER_BIT -> what = flip(bytes, p.header(), p.headerLength(), rnd);
      case LEVELS_BIT -> what = flip(bytes, p.body(), Math.min(size, 12), rnd);
      case BODY_BIT -> what = flip(bytes, p.body(), size, rnd);
      case CUT -> {
        int from = size / 2;
        java.util.Arrays.fill(bytes, (int) p.body() + from, (int) p.body() + size, (byte) 0);
        what = "bytes " + from + ".." + size + " of the body zeroed";
      }
      default -> what = valueCount(bytes, p, rnd);
    }
    Files.write(file, bytes);
    Files.deleteIfExists(file.resolveSibling("." + file.getFileName() + ".crc"));
    return kind + " in a " + p.h().getType() + " page at " + p.header() + ": " + what;
  }

  private static String flip(byte[] bytes, long at, int length, Random rnd) {
    if (length <= 0) {
      return "nothing (an empty range)";
    }
    int i = (int) at + rnd.nextInt(length);
    int bit = rnd.nextInt(8);
    bytes[i] ^= (byte) (1 << bit);
    return "bit " + bit + " of byte " + i;
  }

  /** The value count one more or less, where its encoding keeps the header's length. */
  private static String valueCount(byte[] bytes, Page p, Random rnd) throws IOException {
    PageHeader h = p.h().deepCopy();
    int delta = rnd.nextBoolean() ? 1 : -1;
    if (h.getType() == PageType.DATA_PAGE) {
      h.getData_page_header().setNum_values(h.getData_page_header().getNum_values() + delta);
    } else if (h.getType() == PageType.DATA_PAGE_V2) {
      h.getData_page_header_v2().setNum_values(h.getData_page_header_v2().getNum_values() + delta);
    } else if (h.getType() == PageType.DICTIONARY_PAGE) {
      h.getDictionary_page_header()
          .setNum_values(h.getDictionary_page_header().getNum_values() + delta);
    } else {
      return "nothing (a " + h.getType() + " page)";
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Util.writePageHeader(h, out);
    if (out.size() != p.headerLength()) {
      return "nothing (the count's encoding would change the header's length)";
    }
    System.arraycopy(out.toByteArray(), 0, bytes, (int) p.header(), out.size());
    return "value count " + (delta > 0 ? "+1" : "-1");
  }

  /** Every page of every column chunk, from the footer's chunk offsets and the page headers. */
  private static List<Page> pages(byte[] bytes) throws IOException {
    int tail = bytes.length - 8;
    int length = ByteBuffer.wrap(bytes, tail, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
    FileMetaData meta =
        Util.readFileMetaData(new ByteArrayInputStream(bytes, tail - length, length));
    List<Page> pages = new ArrayList<>();
    for (RowGroup g : meta.getRow_groups()) {
      for (ColumnChunk c : g.getColumns()) {
        ColumnMetaData m = c.getMeta_data();
        long at =
            m.isSetDictionary_page_offset() && m.getDictionary_page_offset() > 0
                ? Math.min(m.getDictionary_page_offset(), m.getData_page_offset())
                : m.getData_page_offset();
        long end = at + m.getTotal_compressed_size();
        while (at < end) {
          CountingStream in = new CountingStream(bytes, (int) at);
          PageHeader h = Util.readPageHeader(in);
          pages.add(new Page(at, in.read, h));
          at += in.read + h.getCompressed_page_size();
        }
      }
    }
    return pages;
  }

  /** Reads {@code bytes} from an offset, counting what was read. */
  private static final class CountingStream extends InputStream {
    private final byte[] bytes;
    private final int start;
    int read;

    CountingStream(byte[] bytes, int start) {
      this.bytes = bytes;
      this.start = start;
    }

    @Override
    public int read() {
      return start + read < bytes.length ? bytes[start + read++] & 0xff : -1;
    }
  }
}
