package dev.overlap.executor.input.parquet;

import dev.overlap.executor.input.parquet.delta.DeletedRows;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;

/**
 * What a task reads of one file split on the GPU path: the row groups whose midpoints fall in the
 * split and, per row group, the byte ranges of the columns read; and the rows its Delta table
 * deleted, when a deletion vector lists some.
 */
public final class FilePlan {
  /** The codecs cuDF's Parquet reader decompresses on the GPU. */
  static final Set<CompressionCodecName> GPU_CODECS =
      EnumSet.of(
          CompressionCodecName.UNCOMPRESSED,
          CompressionCodecName.SNAPPY,
          CompressionCodecName.GZIP,
          CompressionCodecName.ZSTD,
          CompressionCodecName.LZ4_RAW,
          CompressionCodecName.BROTLI);

  private final FileSplit split;
  private final ParquetFooter footer;
  private final FileColumns columns;
  private final int[] rowGroups;
  private final DeletedRows deleted;

  private FilePlan(
      FileSplit split,
      ParquetFooter footer,
      FileColumns columns,
      int[] rowGroups,
      DeletedRows deleted) {
    this.split = split;
    this.footer = footer;
    this.columns = columns;
    this.rowGroups = rowGroups;
    this.deleted = deleted;
  }

  /**
   * Plans one split: reads (or finds) the footer, matches the columns, picks the row groups.
   *
   * @throws NotForGpu when the GPU would not read the file exactly as Spark does
   */
  public static FilePlan of(FileSplit split, ScanColumns scan, Configuration conf)
      throws IOException, NotForGpu {
    ParquetFooter footer = ParquetFooter.of(split, conf);
    FileColumns columns =
        FileColumns.of(scan, footer.metadata().getFileMetaData(), split.fileName());
    // A row group without rows has nothing to decode (and a batch of none would end the input).
    int[] rowGroups =
        java.util.Arrays.stream(footer.rowGroupsOf(split.start(), split.length()))
            .filter(rg -> footer.metadata().getBlocks().get(rg).getRowCount() > 0)
            .toArray();
    DeletedRows deleted = null;
    if (split.deletionVector() != null) {
      long[] groupRows =
          footer.metadata().getBlocks().stream().mapToLong(BlockMetaData::getRowCount).toArray();
      deleted = DeletedRows.load(split.deletionVector(), groupRows, conf);
    }
    FilePlan plan = new FilePlan(split, footer, columns, rowGroups, deleted);
    for (int rg : rowGroups) {
      for (ColumnChunkMetaData c : plan.chunks(rg)) {
        if (c.isEncrypted()) {
          throw new NotForGpu(
              split.fileName() + ": column '" + c.getPath().toDotString() + "' is encrypted");
        }
        if (!GPU_CODECS.contains(c.getCodec())) {
          throw new NotForGpu(
              split.fileName()
                  + ": column '"
                  + c.getPath().toDotString()
                  + "' is compressed with "
                  + c.getCodec()
                  + ", which the GPU does not decompress");
        }
        if (c.getCodec() != CompressionCodecName.UNCOMPRESSED
            && c.getTotalUncompressedSize() <= 0) {
          throw new NotForGpu(unsized(split.fileName(), c));
        }
      }
    }
    return plan;
  }

  /**
   * Why a compressed chunk whose footer gives its uncompressed size as 0 (or less) is read on the
   * host. cuDF's reader decompresses a batch's pages only when its chunks' uncompressed sizes add
   * up to more than 0: where every chunk says 0 (DuckDB's writer did until November 2022), it
   * decodes the compressed bytes as if they were the pages' values, and faults (an illegal memory
   * access that fences the GPU) or reads other values. Spark's reader takes each page's sizes from
   * its header.
   */
  static String unsized(String file, ColumnChunkMetaData c) {
    return file
        + ": column '"
        + c.getPath().toDotString()
        + "' is "
        + c.getCodec()
        + "-compressed, but the footer gives its uncompressed size as "
        + c.getTotalUncompressedSize()
        + " (as older DuckDB wrote it), which cuDF's reader does not decompress";
  }

  public FileSplit split() {
    return split;
  }

  public ParquetFooter footer() {
    return footer;
  }

  public FileColumns columns() {
    return columns;
  }

  /** The rows of the file its Delta table deleted; null when none are. */
  public DeletedRows deleted() {
    return deleted;
  }

  /** The split's row groups, indices in the file, in file order. */
  public int[] rowGroups() {
    return rowGroups;
  }

  /** The chunks of the columns read, in row group {@code rg}, in the file's column order. */
  List<ColumnChunkMetaData> chunks(int rg) {
    BlockMetaData block = footer.metadata().getBlocks().get(rg);
    List<ColumnChunkMetaData> out = new ArrayList<>();
    Set<String> read = Set.of(columns.include());
    for (ColumnChunkMetaData c : block.getColumns()) {
      if (read.contains(c.getPath().toArray()[0])) {
        out.add(c);
      }
    }
    return out;
  }

  /** Rows in row group {@code rg}. */
  public long rows(int rg) {
    return footer.metadata().getBlocks().get(rg).getRowCount();
  }

  /**
   * Byte ranges {@code {offset, length}} of the read columns' chunks in row group {@code rg}: from
   * the chunk's first page (its dictionary page when it has one) over its compressed size, as
   * cuDF's reader asks for them.
   */
  public long[][] ranges(int rg) {
    List<ColumnChunkMetaData> chunks = chunks(rg);
    long[][] out = new long[chunks.size()][];
    for (int i = 0; i < out.length; i++) {
      ColumnChunkMetaData c = chunks.get(i);
      out[i] = new long[] {c.getStartingPos(), c.getTotalSize()};
    }
    return out;
  }

  /** Compressed bytes of the read columns in row group {@code rg}. */
  public long compressedBytes(int rg) {
    long n = 0;
    for (long[] r : ranges(rg)) {
      n += r[1];
    }
    return n;
  }

  /**
   * Device bytes the decoded columns of row group {@code rg} take, at most: per chunk the larger of
   * its uncompressed size and eight bytes a row, plus validity and string offsets.
   */
  public long decodedBytes(int rg) {
    long rows = rows(rg);
    long n = 0;
    for (ColumnChunkMetaData c : chunks(rg)) {
      n += Math.max(c.getTotalUncompressedSize(), rows * 8) + rows / 8 + 1 + 4 * (rows + 1);
    }
    return n;
  }
}
