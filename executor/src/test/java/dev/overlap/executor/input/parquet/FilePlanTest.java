package dev.overlap.executor.input.parquet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.testing.UnsizedChunks;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.column.ParquetProperties;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.example.GroupReadSupport;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The GPU path's choice of row groups and byte ranges, on real files written by parquet-hadoop with
 * many row groups, against parquet-hadoop's own reader given the same splits: every row is read
 * exactly once, by the split Spark's reader reads it in.
 */
class FilePlanTest {
  static final MessageType SCHEMA =
      MessageTypeParser.parseMessageType(
          "message t { required int64 id; optional int32 n; optional binary s (STRING);"
              + " optional double d; }");
  static final int ROWS = 30_000;

  @TempDir Path dir;

  static Path write(Path file, CompressionCodecName codec, int rows) throws IOException {
    Configuration conf = new Configuration();
    SimpleGroupFactory groups = new SimpleGroupFactory(SCHEMA);
    try (ParquetWriter<Group> w =
        ExampleParquetWriter.builder(new org.apache.hadoop.fs.Path(file.toUri()))
            .withConf(conf)
            .withType(SCHEMA)
            .withCompressionCodec(codec)
            .withRowGroupSize(24 * 1024L)
            .withPageSize(4 * 1024)
            .withWriterVersion(ParquetProperties.WriterVersion.PARQUET_1_0)
            .build()) {
      for (int i = 0; i < rows; i++) {
        Group g = groups.newGroup().append("id", (long) i);
        if (i % 7 != 0) {
          g.append("n", i * 3);
        }
        if (i % 5 != 0) {
          g.append("s", "v" + (i % 113) + "-" + i);
        }
        g.append("d", i / 4.0);
        w.write(g);
      }
    }
    return file;
  }

  static ScanColumns columns(String... names) {
    StructType s = new StructType();
    for (String n : names) {
      s =
          s.add(
              n,
              switch (n) {
                case "id" -> DataTypes.LongType;
                case "n" -> DataTypes.IntegerType;
                case "s" -> DataTypes.StringType;
                default -> DataTypes.DoubleType;
              });
    }
    return new ScanColumns(names, s, false, "CORRECTED");
  }

  static FileSplit split(Path file, long start, long length) throws IOException {
    return new FileSplit(
        file.toUri().toString(),
        start,
        length,
        Files.size(file),
        Files.getLastModifiedTime(file).toMillis());
  }

  /** The ids parquet-hadoop's reader reads for the split {@code [start, start + length)}. */
  static Set<Long> idsParquetReads(Path file, long start, long length) throws IOException {
    Set<Long> ids = new HashSet<>();
    try (ParquetReader<Group> r =
        ParquetReader.builder(new GroupReadSupport(), new org.apache.hadoop.fs.Path(file.toUri()))
            .withFileRange(start, start + length)
            .build()) {
      for (Group g = r.read(); g != null; g = r.read()) {
        ids.add(g.getLong("id", 0));
      }
    }
    return ids;
  }

  @ParameterizedTest
  @EnumSource(
      value = CompressionCodecName.class,
      names = {"UNCOMPRESSED", "SNAPPY", "GZIP", "ZSTD"})
  void everyRowIsReadOnceByTheSplitParquetReadsItIn(CompressionCodecName codec) throws Exception {
    Path file = write(dir.resolve("t-" + codec + ".parquet"), codec, ROWS);
    long size = Files.size(file);
    Configuration conf = new Configuration();
    ParquetFooter footer = ParquetFooter.of(split(file, 0, size), conf);
    List<BlockMetaData> blocks = footer.metadata().getBlocks();
    assertTrue(blocks.size() >= 8, "row groups: " + blocks.size());
    long[] firstId = new long[blocks.size() + 1];
    for (int i = 0; i < blocks.size(); i++) {
      firstId[i + 1] = firstId[i] + blocks.get(i).getRowCount();
    }
    for (long splitSize : new long[] {997, 4096, 12_345, size / 3 + 1, size}) {
      Set<Integer> seen = new TreeSet<>();
      for (long start = 0; start < size; start += splitSize) {
        long length = Math.min(splitSize, size - start);
        FilePlan plan = FilePlan.of(split(file, start, length), columns("d", "id"), conf);
        Set<Long> mine = new HashSet<>();
        for (int rg : plan.rowGroups()) {
          assertTrue(seen.add(rg), "row group " + rg + " read twice, split size " + splitSize);
          for (long id = firstId[rg]; id < firstId[rg + 1]; id++) {
            mine.add(id);
          }
        }
        assertEquals(
            idsParquetReads(file, start, length),
            mine,
            "split [" + start + ", " + (start + length) + ")");
      }
      assertEquals(blocks.size(), seen.size(), "split size " + splitSize);
    }
  }

  @Test
  void rangesAreTheChunksOfTheColumnsReadAndCoverTheRowGroup() throws Exception {
    Path file = write(dir.resolve("r.parquet"), CompressionCodecName.SNAPPY, 5_000);
    long size = Files.size(file);
    Configuration conf = new Configuration();
    FilePlan all = FilePlan.of(split(file, 0, size), columns("id", "n", "s", "d"), conf);
    FilePlan some = FilePlan.of(split(file, 0, size), columns("s", "id"), conf);
    assertArrayEquals(all.rowGroups(), some.rowGroups());
    for (int rg : all.rowGroups()) {
      BlockMetaData b = all.footer().metadata().getBlocks().get(rg);
      long[][] r = all.ranges(rg);
      assertEquals(4, r.length);
      // All four columns' chunks lie back to back and make up the row group.
      assertEquals(b.getStartingPos(), r[0][0]);
      for (int i = 1; i < r.length; i++) {
        assertEquals(r[i - 1][0] + r[i - 1][1], r[i][0], "chunk " + i + " of row group " + rg);
      }
      assertEquals(b.getCompressedSize(), all.compressedBytes(rg));
      assertTrue(r[3][0] + r[3][1] <= size - 8);
      // Two columns, in the file's order: id's chunk, then s's.
      long[][] s = some.ranges(rg);
      assertArrayEquals(r[0], s[0]);
      assertArrayEquals(r[2], s[1]);
      assertTrue(some.decodedBytes(rg) >= b.getRowCount() * 8, "decoded size of row group " + rg);
    }
    assertArrayEquals(new String[] {"id", "s"}, some.columns().include());
    assertEquals(1, some.columns().decodedIndex(0));
    assertEquals(0, some.columns().decodedIndex(1));
  }

  @Test
  void anEmptyFileAndASplitWithoutARowGroupMidpointReadNothing() throws Exception {
    Path empty = write(dir.resolve("empty.parquet"), CompressionCodecName.SNAPPY, 0);
    Configuration conf = new Configuration();
    assertEquals(
        0, FilePlan.of(split(empty, 0, Files.size(empty)), columns("id"), conf).rowGroups().length);
    Path file = write(dir.resolve("one.parquet"), CompressionCodecName.SNAPPY, 100);
    // The first four bytes are the magic; no row group has its midpoint there.
    assertEquals(0, FilePlan.of(split(file, 0, 4), columns("id"), conf).rowGroups().length);
  }

  @Test
  void footersAreCachedAndOnlyPlainParquetFilesAreRead() throws Exception {
    Path file = write(dir.resolve("c.parquet"), CompressionCodecName.SNAPPY, 100);
    Configuration conf = new Configuration();
    FileSplit s = split(file, 0, Files.size(file));
    assertSame(ParquetFooter.of(s, conf), ParquetFooter.of(s, conf));

    Path encrypted = dir.resolve("e.parquet");
    Files.write(encrypted, "PARE....................PARE".getBytes());
    NotForGpu e =
        assertThrows(
            NotForGpu.class,
            () -> ParquetFooter.of(split(encrypted, 0, Files.size(encrypted)), conf));
    assertEquals("e.parquet has an encrypted footer", e.reason());

    Path text = dir.resolve("x.parquet");
    Files.write(text, "just some text, not a parquet file".getBytes());
    e =
        assertThrows(
            NotForGpu.class, () -> ParquetFooter.of(split(text, 0, Files.size(text)), conf));
    assertTrue(e.reason().startsWith("x.parquet does not end with Parquet's magic"), e.reason());
  }

  @Test
  void aCodecTheGpuLacksSendsTheFileToTheHost() throws Exception {
    // Hadoop's LZ4 framing (not LZ4_RAW) is not decompressed by cuDF.
    Path file = write(dir.resolve("lz4.parquet"), CompressionCodecName.LZ4, 100);
    NotForGpu e =
        assertThrows(
            NotForGpu.class,
            () ->
                FilePlan.of(
                    split(file, 0, Files.size(file)), columns("n", "id"), new Configuration()));
    assertEquals(
        "lz4.parquet: column 'id' is compressed with LZ4, which the GPU does not decompress",
        e.reason());
  }

  @Test
  void compressedChunksWithoutAnUncompressedSizeAreReadOnTheHost() throws Exception {
    Configuration conf = new Configuration();
    Path file = UnsizedChunks.of(write(dir.resolve("u.parquet"), CompressionCodecName.SNAPPY, 900));
    // Pages and headers are unchanged: parquet-hadoop still reads every row.
    assertEquals(900, idsParquetReads(file, 0, Files.size(file)).size());
    NotForGpu e =
        assertThrows(
            NotForGpu.class,
            () -> FilePlan.of(split(file, 0, Files.size(file)), columns("s", "id"), conf));
    assertEquals(
        "u.parquet: column 'id' is SNAPPY-compressed, but the footer gives its uncompressed size"
            + " as 0 (as older DuckDB wrote it), which cuDF's reader does not decompress",
        e.reason());
    // An uncompressed chunk needs no size to be decoded.
    Path plain =
        UnsizedChunks.of(write(dir.resolve("p.parquet"), CompressionCodecName.UNCOMPRESSED, 900));
    assertTrue(
        FilePlan.of(split(plain, 0, Files.size(plain)), columns("id"), conf).rowGroups().length
            > 0);
  }

  @Test
  void duckDbFilesWithoutUncompressedSizesAreReadOnTheHost() throws Exception {
    Configuration conf = new Configuration();
    for (String[] f : new String[][] {{"bug3734", "tconst"}, {"bug4859", "id"}}) {
      Path file = dir.resolve(f[0] + ".parquet");
      try (InputStream in = getClass().getResourceAsStream("/duckdb/" + f[0] + ".parquet")) {
        Files.copy(in, file);
      }
      ScanColumns one =
          new ScanColumns(
              new String[] {f[1]},
              new StructType().add(f[1], DataTypes.StringType),
              false,
              "CORRECTED");
      NotForGpu e =
          assertThrows(
              NotForGpu.class, () -> FilePlan.of(split(file, 0, Files.size(file)), one, conf));
      assertTrue(
          e.reason().startsWith(f[0] + ".parquet: column '" + f[1] + "' is SNAPPY-compressed"),
          e.reason());
    }
  }
}
