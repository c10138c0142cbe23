package dev.overlap.executor.input.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.testing.LevelFiles;
import dev.overlap.executor.testing.LocalSession;
import dev.overlap.executor.testing.NestedData;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.hadoop.CodecFactory;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The levels check on files that keep Parquet's rules (Spark's, Arrow's and Rust's writers, pages
 * cut inside rows by hand) and files that break them (apache/parquet-testing's, and by hand): every
 * valid chunk passes, every broken file gets one line naming the column.
 */
class LevelCheckTest {
  private static SparkSession spark;
  private static Path root;

  private static final String DELTA =
      " holds strings in DELTA_BYTE_ARRAY encoding inside a list or map";

  /** NestedData's strings in a list or map, refused in DELTA_BYTE_ARRAY encoding. */
  private static final List<String> DELTA_STRINGS =
      List.of(
          "column tags.list.element" + DELTA,
          "column props.key_value.key" + DELTA,
          "column props.key_value.value" + DELTA);

  @BeforeAll
  static void start() throws Exception {
    root = Files.createTempDirectory("overlap-levels");
    spark = LocalSession.start("local[2]", "level-check");
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  /** The check's verdicts on every repeated leaf's chunk of {@code file}, nulls dropped. */
  static List<String> violations(Path file) throws Exception {
    Configuration conf = new Configuration();
    ParquetMetadata footer;
    try (ParquetFileReader r =
        ParquetFileReader.open(
            HadoopInputFile.fromPath(new org.apache.hadoop.fs.Path(file.toUri()), conf))) {
      footer = r.getFooter();
    }
    MessageType schema = footer.getFileMetaData().getSchema();
    List<String> out = new ArrayList<>();
    int checked = 0;
    CodecFactory codecs = new CodecFactory(conf, 0);
    try (FileChannel ch = FileChannel.open(file)) {
      for (BlockMetaData b : footer.getBlocks()) {
        for (ColumnChunkMetaData c : b.getColumns()) {
          ColumnDescriptor leaf = schema.getColumnDescription(c.getPath().toArray());
          if (!LevelCheck.applies(leaf)) {
            continue;
          }
          ByteBuffer bytes = ByteBuffer.allocate((int) c.getTotalSize());
          ch.read(bytes, c.getStartingPos());
          bytes.flip();
          var d =
              c.getCodec() == CompressionCodecName.UNCOMPRESSED
                  ? null
                  : codecs.getDecompressor(c.getCodec());
          String why = new LevelCheck(leaf, c, b.getRowCount(), d).violation(bytes);
          checked++;
          if (why != null) {
            out.add(why);
          }
        }
      }
    } finally {
      codecs.release();
    }
    assertTrue(checked > 0, file + ": no repeated leaf checked");
    return out;
  }

  private static Path resource(String name) throws Exception {
    Path p = root.resolve(name.replace('/', '-'));
    try (InputStream in = LevelCheckTest.class.getResourceAsStream("/" + name)) {
      Files.copy(in, p);
    }
    return p;
  }

  @Test
  void repetitionLevelsStartingWithOneAreNamedWithTheColumn() throws Exception {
    assertEquals(
        List.of(
            "column x.list.element's repetition levels do not start with 0 (a row) where a page"
                + " must, or exceed 1"),
        violations(resource("parquet-testing/ARROW-GH-45185.parquet")));
    Path own = root.resolve("starts-at-one.parquet");
    LevelFiles.write(own, 500, 7, LevelFiles.Pages.V1_STARTS_AT_ONE);
    assertEquals(1, violations(own).size(), violations(own).toString());
  }

  @Test
  void levelsFewerThanTheHeaderCountsAreNamed() throws Exception {
    List<String> v = violations(resource("parquet-testing/ARROW-RS-GH-6229-LEVELS.parquet"));
    assertEquals(1, v.size(), v.toString());
    assertTrue(v.get(0).startsWith("column outer.list.item.c"), v.get(0));
  }

  @Test
  void aVersionTwoPageStartingInsideARowIsNamed() throws Exception {
    Path f = root.resolve("v2-inside.parquet");
    LevelFiles.write(f, 2_000, 3, LevelFiles.Pages.V2_INSIDE_ROWS);
    List<String> v = violations(f);
    assertEquals(1, v.size(), v.toString());
    assertTrue(v.get(0).contains("do not start with 0"), v.get(0));
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
  void pagesCutByHandInsideRowsOrAtRowsPassAndSparkReadsWhatWasWritten(long seed) throws Exception {
    for (LevelFiles.Pages pages :
        List.of(LevelFiles.Pages.V1_INSIDE_ROWS, LevelFiles.Pages.V2_AT_ROWS)) {
      Path dir = Files.createDirectories(root.resolve("by-hand-" + pages + "-" + seed));
      List<List<Integer>> written =
          LevelFiles.write(dir.resolve("f.parquet"), 1_000 + (int) seed * 37, seed, pages);
      assertEquals(List.of(), violations(dir.resolve("f.parquet")), pages + " " + seed);
      List<Row> read = spark.read().parquet(dir.toString()).orderBy("id").collectAsList();
      assertEquals(written.size(), read.size());
      for (int i = 0; i < read.size(); i++) {
        List<Integer> got = read.get(i).isNullAt(1) ? null : read.get(i).getList(1);
        assertEquals(written.get(i), got, pages + " seed " + seed + " row " + i);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"snappy-v1", "zstd-v2", "none-v1", "gzip-v2"})
  void sparksNestedFilesPass(String how) throws Exception {
    String[] p = how.split("-");
    Path dir = root.resolve("spark-" + how);
    NestedData.frame(spark, 20_000, 2)
        .write()
        .option("compression", p[0])
        .option("parquet.writer.version", p[1])
        .option("parquet.page.size", 4096)
        .parquet(dir.toString());
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.filter(f -> f.toString().endsWith(".parquet")).toList()) {
        // Version 2 pages hold these strings (most distinct) in DELTA_BYTE_ARRAY encoding, which
        // the check refuses on purpose; nothing else is refused.
        assertEquals(p[1].equals("v2") ? DELTA_STRINGS : List.of(), violations(f), f.toString());
      }
    }
  }

  @Test
  void randomNestedColumnsSparkWroteInRandomPagesPass() throws Exception {
    for (long seed = 1; seed <= 10; seed++) {
      dev.overlap.executor.testing.RandomNested data =
          new dev.overlap.executor.testing.RandomNested(seed);
      Path dir = root.resolve("random-" + seed);
      var w = data.frame(spark, 2_000, 2).write();
      data.writeOptions().forEach(w::option);
      w.parquet(dir.toString());
      try (Stream<Path> files = Files.list(dir)) {
        for (Path f : files.filter(f -> f.toString().endsWith(".parquet")).toList()) {
          // Only DELTA_BYTE_ARRAY strings in a list or map, which the check refuses on purpose.
          for (String v : violations(f)) {
            assertTrue(v.contains("DELTA_BYTE_ARRAY"), seed + " " + v);
            assertEquals("v2", data.writeOptions().get("parquet.writer.version"), v);
          }
        }
      }
    }
  }

  @Test
  void stringsOfAMapInDeltaEncodingAreNamed() throws Exception {
    Path dir = root.resolve("delta");
    NestedData.frame(spark, 5_000, 1)
        .select("id", "props")
        .write()
        .option("parquet.writer.version", "v2")
        .option("parquet.enable.dictionary", "false")
        .parquet(dir.toString());
    try (Stream<Path> files = Files.list(dir)) {
      Path f = files.filter(p -> p.toString().endsWith(".parquet")).findFirst().orElseThrow();
      assertEquals(
          List.of("column props.key_value.key" + DELTA, "column props.key_value.value" + DELTA),
          violations(f));
    }
  }

  @Test
  void otherWritersNestedFilesPass() throws Exception {
    for (String name : dev.overlap.executor.task.ParquetPlanOrHostTest.WRITERS) {
      for (String v : violations(resource("writers/" + name + ".parquet"))) {
        assertTrue(name.startsWith("rust-") && v.contains("DELTA_BYTE_ARRAY"), name + ": " + v);
      }
    }
  }
}
