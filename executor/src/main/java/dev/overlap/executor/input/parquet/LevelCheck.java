package dev.overlap.executor.input.parquet;

import ai.rapids.cudf.ByteRange;
import ai.rapids.cudf.HostMemoryBuffer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.bytes.ByteBufferInputStream;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.bytes.BytesUtils;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.values.rle.RunLengthBitPackingHybridDecoder;
import org.apache.parquet.compression.CompressionCodecFactory.BytesInputDecompressor;
import org.apache.parquet.format.DataPageHeader;
import org.apache.parquet.format.DataPageHeaderV2;
import org.apache.parquet.format.Encoding;
import org.apache.parquet.format.PageHeader;
import org.apache.parquet.format.PageType;
import org.apache.parquet.format.Util;
import org.apache.parquet.hadoop.CodecFactory;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.schema.MessageType;

/**
 * Checks of a chunk on the host, before cuDF decodes it; a chunk that fails is read on the host
 * ({@link DecodeFailed}). Every chunk: its dictionary page decompresses to its stated size and
 * holds its values. A repeated leaf's chunk: its levels keep Parquet's rules (cuDF trusts them;
 * Spark reads broken ones otherwise, e.g. repetition levels that start at 1, ARROW-GH-45185), and
 * it is not in DELTA_BYTE_ARRAY encoding (cuDF was seen to append other values' bytes to some
 * strings).
 *
 * <p>The levels: the data pages' value counts add up to the footer's; the first repetition level is
 * 0; levels are RLE encoded and within the leaf's maximum where they are read. Every version 2
 * page's levels are read (each starts a row; its row count is its levels' count of rows started;
 * the chunk's rows are the row group's), and version 1 pages' of an uncompressed chunk. In a
 * compressed version 1 chunk only the first data page is decompressed: the others would cost a host
 * decompression of the whole column, what the GPU is there to do.
 */
final class LevelCheck {
  private final ColumnDescriptor leaf;
  private final ColumnChunkMetaData chunk;
  private final long groupRows;
  private final BytesInputDecompressor decompressor;

  /**
   * @param decompressor the chunk's codec's, for its first page; null when it is uncompressed
   */
  LevelCheck(
      ColumnDescriptor leaf,
      ColumnChunkMetaData chunk,
      long groupRows,
      BytesInputDecompressor decompressor) {
    this.leaf = leaf;
    this.chunk = chunk;
    this.groupRows = groupRows;
    this.decompressor = decompressor;
  }

  /**
   * Checks the repeated leaves' chunks of row groups {@code groups} of {@code plan}'s file, read
   * into {@code buffer} ({@code ranges[k]} of the file at {@code starts[k]}).
   *
   * @throws DecodeFailed naming the file and the column whose levels break Parquet's rules
   */
  static void chunks(
      FilePlan plan,
      int[] groups,
      ByteRange[] ranges,
      long[] starts,
      HostMemoryBuffer buffer,
      Configuration conf) {
    ParquetMetadata footer = plan.footer().metadata();
    MessageType schema = footer.getFileMetaData().getSchema();
    Map<Long, Integer> byOffset = new HashMap<>();
    for (int k = 0; k < ranges.length; k++) {
      byOffset.put(ranges[k].offset(), k);
    }
    CodecFactory codecs = null;
    try {
      for (int g : groups) {
        BlockMetaData block = footer.getBlocks().get(g);
        for (ColumnChunkMetaData c : block.getColumns()) {
          ColumnDescriptor leaf = schema.getColumnDescription(c.getPath().toArray());
          Integer k = byOffset.get(c.getStartingPos());
          if (k == null || ranges[k].size() > Integer.MAX_VALUE) {
            continue; // a column not read, or a chunk of 2 GiB or more, which a buffer cannot view
          }
          boolean compressed = c.getCodec() != CompressionCodecName.UNCOMPRESSED;
          BytesInputDecompressor d = null;
          if (compressed) {
            codecs = codecs != null ? codecs : new CodecFactory(conf, 0);
            d = codecs.getDecompressor(c.getCodec());
          }
          LevelCheck check = new LevelCheck(leaf, c, block.getRowCount(), d);
          ByteBuffer bytes = buffer.asByteBuffer(starts[k], (int) ranges[k].size());
          String why =
              applies(leaf)
                  ? check.violation(bytes)
                  : new DictionaryCheck(leaf, d).violation(bytes);
          if (why != null) {
            throw DecodeFailed.levels(plan.split().path(), "row group " + g + ", " + why);
          }
        }
      }
    } finally {
      if (codecs != null) {
        codecs.release();
      }
    }
  }

  /** Whether the check applies to {@code leaf}: a leaf under a list or a map. */
  static boolean applies(ColumnDescriptor leaf) {
    return leaf.getMaxRepetitionLevel() > 0;
  }

  /**
   * Why the chunk's levels break Parquet's rules, one line naming the column; null when they keep
   * them.
   *
   * @param bytes the chunk, from its first page header (the dictionary's, if any) to its end
   */
  String violation(ByteBuffer bytes) {
    if (chunk.getEncodings().contains(org.apache.parquet.column.Encoding.DELTA_BYTE_ARRAY)) {
      // Seen on the H200 (LevelsGpuTest's random files): strings of a map written in version 2
      // pages without a dictionary come back from cuDF with bytes of other values appended.
      return where() + " holds strings in DELTA_BYTE_ARRAY encoding inside a list or map";
    }
    try {
      return pages(bytes);
    } catch (IOException | RuntimeException e) {
      return unreadable(e);
    }
  }

  private String pages(ByteBuffer bytes) throws IOException {
    ByteBufferInputStream in = ByteBufferInputStream.wrap(bytes.slice());
    long values = 0;
    long rows = 0;
    boolean allRowsCounted = true;
    boolean first = true;
    while (in.available() > 0) {
      PageHeader h = Util.readPageHeader(in);
      int size = h.getCompressed_page_size();
      if (size < 0 || size > in.available()) {
        return where() + " has a page of " + size + " bytes, past the chunk's end";
      }
      ByteBuffer page = in.slice(size).order(ByteOrder.LITTLE_ENDIAN);
      if (h.getType() == PageType.DICTIONARY_PAGE) {
        String why = new DictionaryCheck(leaf, decompressor).page(h, page);
        if (why != null) {
          return why;
        }
      } else if (h.getType() == PageType.DATA_PAGE) {
        DataPageHeader d = h.getData_page_header();
        values += d.getNum_values();
        if (d.getRepetition_level_encoding() != Encoding.RLE) {
          return where() + "'s repetition levels are " + d.getRepetition_level_encoding();
        }
        if (first || decompressor == null) {
          ByteBuffer body =
              decompressor == null
                  ? page
                  : decompressor
                      .decompress(BytesInput.from(page), h.getUncompressed_page_size())
                      .toByteBuffer()
                      .order(ByteOrder.LITTLE_ENDIAN);
          int length = body.getInt(body.position());
          body.position(body.position() + 4);
          if (length < 0 || length > body.remaining()) {
            return where() + " has repetition levels of " + length + " bytes, past its page";
          }
          body.limit(body.position() + length);
          long started = rowsStarted(body, d.getNum_values(), first);
          if (started < 0) {
            return levelsWrong(first);
          }
          rows += started;
        } else {
          allRowsCounted = false;
        }
        first = false;
      } else if (h.getType() == PageType.DATA_PAGE_V2) {
        DataPageHeaderV2 d = h.getData_page_header_v2();
        values += d.getNum_values();
        int length = d.getRepetition_levels_byte_length();
        if (length < 0 || length > page.remaining()) {
          return where() + " has repetition levels of " + length + " bytes, past its page";
        }
        page.limit(page.position() + length);
        long started = rowsStarted(page, d.getNum_values(), true);
        if (started < 0) {
          return levelsWrong(true);
        }
        if (started != d.getNum_rows()) {
          return where()
              + " has a page of "
              + d.getNum_rows()
              + " rows whose levels start "
              + started;
        }
        rows += started;
        first = false;
      }
    }
    if (values != chunk.getValueCount()) {
      return where()
          + "'s pages hold "
          + values
          + " values, the footer says "
          + chunk.getValueCount();
    }
    if (allRowsCounted && rows != groupRows) {
      return where() + "'s levels start " + rows + " rows, the row group has " + groupRows;
    }
    return null;
  }

  private String unreadable(Exception e) {
    return DictionaryCheck.unreadable(where(), e);
  }

  private String levelsWrong(boolean startsARow) {
    return where()
        + "'s repetition levels "
        + (startsARow ? "do not start with 0 (a row) where a page must, " : "")
        + "or exceed "
        + leaf.getMaxRepetitionLevel();
  }

  private String where() {
    return "column " + String.join(".", leaf.getPath());
  }

  /**
   * The number of rows {@code count} repetition levels start (levels of 0); -1 when a level is out
   * of range, or when {@code mustStart} and the first is not 0.
   */
  private long rowsStarted(ByteBuffer levels, int count, boolean mustStart) throws IOException {
    int max = leaf.getMaxRepetitionLevel();
    RunLengthBitPackingHybridDecoder rle =
        new RunLengthBitPackingHybridDecoder(
            BytesUtils.getWidthFromMaxInt(max), ByteBufferInputStream.wrap(levels));
    long zeros = 0;
    for (int i = 0; i < count; i++) {
      int r = rle.readInt();
      if (r < 0 || r > max || (i == 0 && mustStart && r != 0)) {
        return -1;
      }
      if (r == 0) {
        zeros++;
      }
    }
    return zeros;
  }
}
