package dev.overlap.executor.output.parquet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.testing.LocalSession;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.format.ConvertedType;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.SchemaElement;
import org.apache.parquet.format.Type;
import org.apache.parquet.format.Util;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.datasources.parquet.ParquetToSparkSchemaConverter;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The footer rewrite that marks timestamp columns as local (timestamp_ntz), checked on a file that
 * Spark's own writer wrote with an adjusted-to-UTC timestamp column, as cuDF writes them.
 */
class ParquetFooterTest {
  private static final StructType WRITTEN =
      new StructType().add("ts", DataTypes.TimestampType).add("n", DataTypes.IntegerType);
  private static final String READ_AS_NTZ = "ts timestamp_ntz, n int";

  private static SparkSession spark;
  @TempDir static Path dir;
  private static byte[] file;
  private static List<LocalDateTime> wallClocks;

  @BeforeAll
  static void writeAFileWithSparksWriter() throws IOException {
    spark =
        LocalSession.start(
            "local[1]",
            "parquet-footer",
            // As cuDF writes them: INT64 microseconds, TIMESTAMP(isAdjustedToUTC=true).
            "spark.sql.parquet.outputTimestampType",
            "TIMESTAMP_MICROS",
            // A session zone other than UTC: local timestamps must not move with it.
            "spark.sql.session.timeZone",
            "America/Los_Angeles",
            "spark.sql.datetime.java8API.enabled",
            "true");
    wallClocks = new ArrayList<>();
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      LocalDateTime t =
          i % 9 == 4
              ? null
              : LocalDateTime.of(1900, 1, 1, 0, 0)
                  .plusSeconds(i * 6_311_111_113L % 6_311_520_000L)
                  .plusNanos(1000L * (i * 7919 % 1_000_000));
      wallClocks.add(t);
      rows.add(RowFactory.create(t == null ? null : t.toInstant(ZoneOffset.UTC), i));
    }
    Path out = dir.resolve("spark");
    spark.createDataFrame(rows, WRITTEN).coalesce(1).write().parquet(out.toString());
    file = Files.readAllBytes(onlyPart(out));
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  private static Path onlyPart(Path folder) throws IOException {
    try (Stream<Path> s = Files.list(folder)) {
      List<Path> parts = s.filter(p -> p.getFileName().toString().startsWith("part-")).toList();
      assertEquals(1, parts.size(), parts.toString());
      return parts.get(0);
    }
  }

  private static int footerLength(byte[] b) {
    return ByteBuffer.wrap(b, b.length - 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
  }

  /** The file's last {@code extra} bytes before its footer, the footer, its length and magic. */
  private static byte[] tail(int extra) {
    int n = footerLength(file) + 8 + extra;
    return Arrays.copyOfRange(file, file.length - n, file.length);
  }

  private static FileMetaData footer(byte[] b) throws IOException {
    int length = footerLength(b);
    return Util.readFileMetaData(new ByteArrayInputStream(b, b.length - 8 - length, length));
  }

  /** The file with its last {@code oldTail} bytes replaced by {@code newTail}. */
  private static byte[] withTail(int oldTail, byte[] newTail) {
    byte[] b = Arrays.copyOf(file, file.length - oldTail + newTail.length);
    System.arraycopy(newTail, 0, b, file.length - oldTail, newTail.length);
    return b;
  }

  private static List<Row> readBack(Path folder, String schema, boolean vectorized) {
    spark.conf().set("spark.sql.parquet.enableVectorizedReader", Boolean.toString(vectorized));
    try {
      List<Row> rows =
          new ArrayList<>(spark.read().schema(schema).parquet(folder.toString()).collectAsList());
      rows.sort(Comparator.comparingInt(r -> r.getInt(1)));
      return rows;
    } finally {
      spark.conf().unset("spark.sql.parquet.enableVectorizedReader");
    }
  }

  @Test
  void sparksFileHoldsAnAdjustedToUtcTimestampAsCudfWritesIt() throws IOException {
    SchemaElement ts = footer(file).getSchema().get(1);
    assertEquals("ts", ts.getName());
    assertEquals(Type.INT64, ts.getType());
    assertTrue(ts.getLogicalType().isSetTIMESTAMP());
    assertTrue(ts.getLogicalType().getTIMESTAMP().isIsAdjustedToUTC());
    assertEquals(ConvertedType.TIMESTAMP_MICROS, ts.getConverted_type());
    // From the Parquet types alone (no Spark schema in the file) Spark takes it as timestamp.
    assertEquals(DataTypes.TimestampType, sparkTypeOfTs(file));
  }

  /** The type Spark gives column ts from the file's Parquet schema alone. */
  private static DataType sparkTypeOfTs(byte[] wholeFile) throws IOException {
    Path p = Files.createTempFile(dir, "footer", ".parquet");
    Files.write(p, wholeFile);
    try (ParquetFileReader r =
        ParquetFileReader.open(
            HadoopInputFile.fromPath(
                new org.apache.hadoop.fs.Path(p.toUri()), new Configuration()))) {
      MessageType schema = r.getFooter().getFileMetaData().getSchema();
      return new ParquetToSparkSchemaConverter(new SQLConf())
          .convert(schema)
          .apply("ts")
          .dataType();
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 100})
  void theFlaggedColumnBecomesALocalTimestampAndNothingElseChanges(int extra) throws IOException {
    byte[] tail = tail(extra);
    byte[] before = tail.clone();
    byte[] marked = FooterRewrite.markLocalTimestamps(tail, new boolean[] {true, false});
    assertArrayEquals(before, tail, "the input is left as it was");
    // The bytes before the footer are kept, the length and magic end it.
    assertArrayEquals(Arrays.copyOfRange(tail, 0, extra), Arrays.copyOfRange(marked, 0, extra));
    assertEquals(marked.length - 8 - extra, footerLength(marked));
    assertEquals("PAR1", new String(marked, marked.length - 4, 4, "US-ASCII"));

    FileMetaData original = footer(file);
    FileMetaData meta = footer(marked);
    SchemaElement ts = meta.getSchema().get(1);
    assertEquals("ts", ts.getName());
    assertEquals(Type.INT64, ts.getType());
    assertTrue(ts.getLogicalType().isSetTIMESTAMP());
    assertFalse(ts.getLogicalType().getTIMESTAMP().isIsAdjustedToUTC());
    assertTrue(ts.getLogicalType().getTIMESTAMP().getUnit().isSetMICROS());
    assertFalse(ts.isSetConverted_type());
    assertEquals(original.getSchema().get(2), meta.getSchema().get(2), "the int column");
    assertEquals(original.getSchema().get(0), meta.getSchema().get(0), "the root");
    // Everything else in the footer (row groups, offsets, key-value metadata) is the same.
    FileMetaData expected = original.deepCopy();
    expected.getSchema().get(1).getLogicalType().getTIMESTAMP().setIsAdjustedToUTC(false);
    expected.getSchema().get(1).unsetConverted_type();
    assertEquals(expected, meta);
  }

  @Test
  void theRewrittenFileOpensInParquetMrAndSparkReadsTheSameWallClocks() throws IOException {
    byte[] tail = tail(0);
    byte[] marked = FooterRewrite.markLocalTimestamps(tail, new boolean[] {true, false});
    Path folder = dir.resolve("marked");
    Files.createDirectories(folder);
    Path part = folder.resolve("part-0.parquet");
    Files.write(part, withTail(tail.length, marked));

    try (ParquetFileReader r =
        ParquetFileReader.open(
            HadoopInputFile.fromPath(
                new org.apache.hadoop.fs.Path(part.toUri()), new Configuration()))) {
      assertEquals(wallClocks.size(), r.getRecordCount());
      MessageType schema = r.getFooter().getFileMetaData().getSchema();
      LogicalTypeAnnotation t = schema.getType("ts").getLogicalTypeAnnotation();
      LogicalTypeAnnotation.TimestampLogicalTypeAnnotation ts =
          assertInstanceOf(LogicalTypeAnnotation.TimestampLogicalTypeAnnotation.class, t);
      assertFalse(ts.isAdjustedToUTC());
      assertEquals(LogicalTypeAnnotation.TimeUnit.MICROS, ts.getUnit());
      assertNotNull(
          r.getFooter()
              .getFileMetaData()
              .getKeyValueMetaData()
              .get(ParquetWriterSchema.SPARK_SCHEMA_KEY));
      assertNotNull(r.readNextRowGroup());
    }
    assertEquals(DataTypes.TimestampNTZType, sparkTypeOfTs(Files.readAllBytes(part)));

    for (boolean vectorized : new boolean[] {true, false}) {
      List<Row> rows = readBack(folder, READ_AS_NTZ, vectorized);
      assertEquals(wallClocks.size(), rows.size());
      for (int i = 0; i < rows.size(); i++) {
        assertEquals(i, rows.get(i).getInt(1));
        assertEquals(
            wallClocks.get(i), rows.get(i).get(0), "row " + i + ", vectorized " + vectorized);
      }
    }
  }

  @Test
  void withNoColumnFlaggedTheFooterMeansTheSame() throws IOException {
    byte[] marked = FooterRewrite.markLocalTimestamps(tail(0), new boolean[] {false, false});
    assertEquals(footer(file), footer(marked));
  }

  @Test
  void aFlaggedColumnThatIsNotATimestampIsRefusedNamingIt() {
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class,
            () -> FooterRewrite.markLocalTimestamps(tail(0), new boolean[] {false, true}));
    assertTrue(e.getMessage().contains("n"), e.getMessage());
  }

  @Test
  void aColumnCountOtherThanTheFootersIsRefused() {
    assertThrows(
        IllegalStateException.class,
        () -> FooterRewrite.markLocalTimestamps(tail(0), new boolean[] {true}));
    assertThrows(
        IllegalStateException.class,
        () -> FooterRewrite.markLocalTimestamps(tail(0), new boolean[] {true, false, false}));
  }

  @Test
  void aTailThatDoesNotEndInTheMagicIsRefused() {
    byte[] t = tail(0);
    t[t.length - 1] = 'X';
    assertThrows(
        IllegalStateException.class,
        () -> FooterRewrite.markLocalTimestamps(t, new boolean[] {true, false}));
    byte[] cut = Arrays.copyOf(tail(0), tail(0).length - 1);
    assertThrows(
        IllegalStateException.class,
        () -> FooterRewrite.markLocalTimestamps(cut, new boolean[] {true, false}));
    assertThrows(
        IllegalStateException.class,
        () -> FooterRewrite.markLocalTimestamps("PAR1".getBytes(), new boolean[] {}));
  }

  @Test
  void aFooterLengthPointingBeforeTheTailIsRefused() {
    byte[] t = tail(0);
    // The footer's first byte left out: its length points one byte before the tail.
    byte[] short1 = Arrays.copyOfRange(t, 1, t.length);
    assertThrows(
        IllegalStateException.class,
        () -> FooterRewrite.markLocalTimestamps(short1, new boolean[] {true, false}));
    for (int length : new int[] {Integer.MAX_VALUE, t.length, -1, 0}) {
      byte[] b = t.clone();
      ByteBuffer.wrap(b, b.length - 8, 4).order(ByteOrder.LITTLE_ENDIAN).putInt(length);
      assertThrows(
          IllegalStateException.class,
          () -> FooterRewrite.markLocalTimestamps(b, new boolean[] {true, false}),
          "length " + length);
    }
  }
}
