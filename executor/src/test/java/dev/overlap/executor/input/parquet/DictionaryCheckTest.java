package dev.overlap.executor.input.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.testing.LocalSession;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.bytes.ByteBufferInputStream;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.compression.CompressionCodecFactory.BytesInputDecompressor;
import org.apache.parquet.format.PageHeader;
import org.apache.parquet.format.Util;
import org.apache.parquet.hadoop.CodecFactory;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The dictionary check on Spark's own files, intact and damaged: an intact dictionary passes, a
 * damaged one (one flipped bit in a compressed page, as the decode fuzzer's seed 6 that faulted
 * cuDF; a string length past the page in an uncompressed one) is named with its column, and Spark's
 * reader refuses the same file.
 */
class DictionaryCheckTest {
  private static SparkSession spark;
  private static Path root;

  @BeforeAll
  static void start() throws Exception {
    root = Files.createTempDirectory("overlap-dictionary");
    spark = LocalSession.start("local[1]", "dictionary-check");
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  @ParameterizedTest
  @ValueSource(strings = {"zstd", "snappy", "none"})
  void aDamagedDictionaryIsNamedAndSparkRefusesItToo(String codec) throws Exception {
    Path dir = root.resolve(codec);
    spark
        .range(0, 20_000, 1, 1)
        .selectExpr("CONCAT('value-', CAST(id % 500 AS STRING)) AS s", "id % 37 AS k")
        .write()
        .option("compression", codec)
        .parquet(dir.toString());
    Path file;
    try (Stream<Path> files = Files.list(dir)) {
      file = files.filter(f -> f.toString().endsWith(".parquet")).findFirst().orElseThrow();
    }
    ColumnChunkMetaData s = chunks(file)[0];
    assertNull(check(file, s), "an intact dictionary was refused");

    long header = s.getStartingPos() + headerLength(file, s);
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
      if (codec.equals("none")) {
        b.putInt(0, 1 << 20); // the first string's length, past the page
        ch.write(b, header);
      } else {
        // Bit 6 of the page's 29th byte, as the fuzzer's seed 6 flipped it.
        long at = s.getStartingPos() + 28;
        ch.read(b, at);
        b.put(0, (byte) (b.get(0) ^ 0x40));
        ch.write(ByteBuffer.wrap(new byte[] {b.get(0)}), at);
      }
    }
    String why = check(file, s);
    assertNotNull(why, "a damaged dictionary passed");
    assertTrue(why.startsWith("column s"), why);
    assertThrows(Exception.class, () -> spark.read().parquet(dir.toString()).collectAsList());
  }

  private static ColumnChunkMetaData[] chunks(Path file) throws Exception {
    try (ParquetFileReader r = open(file)) {
      return r.getFooter().getBlocks().get(0).getColumns().toArray(new ColumnChunkMetaData[0]);
    }
  }

  private static ParquetFileReader open(Path file) throws Exception {
    return ParquetFileReader.open(
        HadoopInputFile.fromPath(new org.apache.hadoop.fs.Path(file.toUri()), new Configuration()));
  }

  private static ByteBuffer bytes(Path file, ColumnChunkMetaData c) throws Exception {
    ByteBuffer bytes = ByteBuffer.allocate((int) c.getTotalSize());
    try (FileChannel ch = FileChannel.open(file)) {
      ch.read(bytes, c.getStartingPos());
    }
    return bytes.flip();
  }

  private static int headerLength(Path file, ColumnChunkMetaData c) throws Exception {
    ByteBufferInputStream in = ByteBufferInputStream.wrap(bytes(file, c));
    PageHeader h = Util.readPageHeader(in);
    assertEquals(org.apache.parquet.format.PageType.DICTIONARY_PAGE, h.getType());
    return (int) in.position();
  }

  private static String check(Path file, ColumnChunkMetaData c) throws Exception {
    ParquetMetadata footer;
    try (ParquetFileReader r = open(file)) {
      footer = r.getFooter();
    }
    ColumnDescriptor leaf =
        footer.getFileMetaData().getSchema().getColumnDescription(c.getPath().toArray());
    CodecFactory codecs = new CodecFactory(new Configuration(), 0);
    try {
      BytesInputDecompressor d =
          c.getCodec() == CompressionCodecName.UNCOMPRESSED
              ? null
              : codecs.getDecompressor(c.getCodec());
      return new DictionaryCheck(leaf, d).violation(bytes(file, c));
    } finally {
      codecs.release();
    }
  }
}
