package dev.overlap.executor.testing;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.bytes.BytesUtils;
import org.apache.parquet.bytes.HeapByteBufferAllocator;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.column.values.rle.RunLengthBitPackingHybridEncoder;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.util.HadoopOutputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;

/**
 * Parquet files whose levels and pages are written by hand, page by page, through parquet-hadoop's
 * low-level writer: an {@code id} and an {@code x array<int>} column of random lists (null, empty,
 * holding nulls), the list's pages cut where a test says, inside a row or not, in page version 1 or
 * 2. Breaking the rules on purpose too: repetition levels that do not start with 0.
 */
public final class LevelFiles {
  public static final MessageType SCHEMA =
      MessageTypeParser.parseMessageType(
          "message m { required int64 id; optional group x (LIST) {"
              + " repeated group list { optional int32 element; } } }");

  /** How to cut and write the list column's levels. */
  public enum Pages {
    /** Version 1 pages cut at random places inside rows (valid in version 1). */
    V1_INSIDE_ROWS,
    /** Version 2 pages cut at row starts (valid). */
    V2_AT_ROWS,
    /** Version 2 pages cut at random places inside rows (invalid: a version 2 page starts one). */
    V2_INSIDE_ROWS,
    /**
     * One version 1 page whose repetition levels are the valid ones moved one place on, so that
     * they start with 1, as in apache/parquet-testing's ARROW-GH-45185 (invalid); rows are never
     * null or empty and hold no nulls.
     */
    V1_STARTS_AT_ONE
  }

  private LevelFiles() {}

  /**
   * Writes {@code rows} random rows of {@code seed} to {@code file}.
   *
   * @return each row's list as written (null for a null list), in id order
   */
  public static List<List<Integer>> write(Path file, int rows, long seed, Pages pages)
      throws IOException {
    Random rnd = new Random(seed);
    boolean plain = pages == Pages.V1_STARTS_AT_ONE;
    List<int[]> levels = new ArrayList<>(); // rep, def, value
    for (int r = 0; r < rows; r++) {
      double shape = rnd.nextDouble();
      if (!plain && shape < 0.1) {
        levels.add(new int[] {0, 0, 0}); // a null list
      } else if (!plain && shape < 0.2) {
        levels.add(new int[] {0, 1, 0}); // an empty list
      } else {
        // A first row of two or more, so that moved levels start with 1.
        int n = plain && r == 0 ? 2 : 1 + rnd.nextInt(plain ? 3 : 6);
        for (int i = 0; i < n; i++) {
          boolean isNull = !plain && rnd.nextDouble() < 0.15;
          levels.add(new int[] {i == 0 ? 0 : 1, isNull ? 2 : 3, rnd.nextInt(1000) - 500});
        }
      }
    }
    List<List<Integer>> written = new ArrayList<>();
    for (int[] l : levels) {
      if (l[0] == 0) {
        written.add(l[1] == 0 ? null : new ArrayList<>());
      }
      if (l[1] >= 2) {
        written.get(written.size() - 1).add(l[1] == 3 ? l[2] : null);
      }
    }
    if (pages == Pages.V1_STARTS_AT_ONE) {
      int first = levels.get(0)[0];
      for (int i = 0; i + 1 < levels.size(); i++) {
        levels.get(i)[0] = levels.get(i + 1)[0];
      }
      levels.get(levels.size() - 1)[0] = first;
    }
    List<Integer> cuts = cuts(levels, rnd, pages);
    Configuration conf = new Configuration();
    org.apache.hadoop.fs.Path path = new org.apache.hadoop.fs.Path(file.toUri());
    ParquetFileWriter w =
        new ParquetFileWriter(
            HadoopOutputFile.fromPath(path, conf),
            SCHEMA,
            ParquetFileWriter.Mode.CREATE,
            128L << 20,
            0);
    w.start();
    w.startBlock(rows);
    boolean v2 = pages == Pages.V2_AT_ROWS || pages == Pages.V2_INSIDE_ROWS;
    ColumnDescriptor id = SCHEMA.getColumns().get(0);
    w.startColumn(id, rows, CompressionCodecName.UNCOMPRESSED);
    BytesInput ids = ids(rows);
    if (v2) {
      w.writeDataPageV2(
          rows,
          0,
          rows,
          BytesInput.empty(),
          BytesInput.empty(),
          Encoding.PLAIN,
          ids,
          (int) ids.size(),
          Statistics.createStats(id.getPrimitiveType()));
    } else {
      w.writeDataPage(
          rows,
          (int) ids.size(),
          ids,
          Statistics.createStats(id.getPrimitiveType()),
          Encoding.RLE,
          Encoding.RLE,
          Encoding.PLAIN);
    }
    w.endColumn();
    ColumnDescriptor x = SCHEMA.getColumns().get(1);
    w.startColumn(x, levels.size(), CompressionCodecName.UNCOMPRESSED);
    for (int p = 0; p + 1 < cuts.size(); p++) {
      List<int[]> page = levels.subList(cuts.get(p), cuts.get(p + 1));
      BytesInput rep = rle(page, 0, 1);
      BytesInput def = rle(page, 1, 3);
      BytesInput values = values(page);
      Statistics<?> stats = Statistics.createStats(x.getPrimitiveType());
      if (v2) {
        int pageRows = (int) page.stream().filter(l -> l[0] == 0).count();
        int nulls = (int) page.stream().filter(l -> l[1] < 3).count();
        w.writeDataPageV2(
            pageRows,
            nulls,
            page.size(),
            rep,
            def,
            Encoding.PLAIN,
            values,
            (int) values.size(),
            stats);
      } else {
        BytesInput body =
            BytesInput.concat(
                BytesInput.fromInt((int) rep.size()),
                rep,
                BytesInput.fromInt((int) def.size()),
                def,
                values);
        w.writeDataPage(
            page.size(),
            (int) body.size(),
            body,
            stats,
            Encoding.RLE,
            Encoding.RLE,
            Encoding.PLAIN);
      }
    }
    w.endColumn();
    w.endBlock();
    w.end(Map.of());
    return written;
  }

  /** Where pages start, in level positions, and the end. */
  private static List<Integer> cuts(List<int[]> levels, Random rnd, Pages pages) {
    List<Integer> cuts = new ArrayList<>(List.of(0));
    if (pages != Pages.V1_STARTS_AT_ONE) {
      for (int i = 1; i < levels.size(); i++) {
        boolean rowStart = levels.get(i)[0] == 0;
        boolean anywhere = pages != Pages.V2_AT_ROWS;
        // About one cut in 12 levels; inside rows, cuts favour the middle of a list.
        if ((anywhere || rowStart) && rnd.nextInt(12) == 0 && (!anywhere || !rowStart)) {
          cuts.add(i);
        }
      }
    }
    cuts.add(levels.size());
    return cuts;
  }

  private static BytesInput rle(List<int[]> page, int which, int max) throws IOException {
    RunLengthBitPackingHybridEncoder e =
        new RunLengthBitPackingHybridEncoder(
            BytesUtils.getWidthFromMaxInt(max), 64, 1 << 20, HeapByteBufferAllocator.getInstance());
    for (int[] l : page) {
      e.writeInt(l[which]);
    }
    return BytesInput.copy(e.toBytes());
  }

  private static BytesInput values(List<int[]> page) {
    List<BytesInput> out = new ArrayList<>();
    for (int[] l : page) {
      if (l[1] == 3) {
        out.add(BytesInput.fromInt(l[2]));
      }
    }
    return BytesInput.concat(out);
  }

  private static BytesInput ids(int rows) {
    byte[] b = new byte[rows * 8];
    for (int i = 0; i < rows; i++) {
      for (int k = 0; k < 8; k++) {
        b[i * 8 + k] = (byte) (((long) i) >>> (8 * k));
      }
    }
    return BytesInput.from(b);
  }
}
