package dev.overlap.executor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The options of a Parquet output: defaults, validation with messages, the files' extension. */
class ParquetOutputTest {
  @Test
  void defaultsAreSnappyRowGroupsOfAMillionRowsOr128MiBAndOneFilePerTask() {
    ParquetOutput o = ParquetOutput.to("/data/out");
    assertEquals("/data/out", o.path());
    assertEquals("snappy", o.compression());
    assertEquals(1_000_000, o.rowGroupRows());
    assertEquals(1_000_000, ParquetOutput.DEFAULT_ROW_GROUP_ROWS);
    assertEquals(128L * 1024 * 1024, o.rowGroupBytes());
    assertEquals(128L * 1024 * 1024, ParquetOutput.DEFAULT_ROW_GROUP_BYTES);
    assertEquals(0, o.rowsPerFile());
    assertEquals(".snappy.parquet", o.extension());
  }

  @Test
  void eachWithReturnsACopyAndLeavesTheOriginalAsItWas() {
    ParquetOutput o = ParquetOutput.to("out");
    ParquetOutput changed =
        o.withCompression("zstd")
            .withRowGroupRows(5000)
            .withRowGroupBytes(4L << 20)
            .withRowsPerFile(123);
    assertNotSame(o, changed);
    assertEquals("out", changed.path());
    assertEquals("zstd", changed.compression());
    assertEquals(5000, changed.rowGroupRows());
    assertEquals(4L << 20, changed.rowGroupBytes());
    assertEquals(123, changed.rowsPerFile());
    assertEquals("snappy", o.compression());
    assertEquals(ParquetOutput.DEFAULT_ROW_GROUP_ROWS, o.rowGroupRows());
    assertEquals(ParquetOutput.DEFAULT_ROW_GROUP_BYTES, o.rowGroupBytes());
    assertEquals(0, o.rowsPerFile());
  }

  @ParameterizedTest
  @CsvSource({
    "snappy, snappy, .snappy.parquet",
    "SNAPPY, snappy, .snappy.parquet",
    "Snappy, snappy, .snappy.parquet",
    "zstd, zstd, .zstd.parquet",
    "ZStd, zstd, .zstd.parquet",
    "none, none, .parquet",
    "NONE, none, .parquet",
    "uncompressed, none, .parquet",
    "UNCOMPRESSED, none, .parquet",
    "' zstd ', zstd, .zstd.parquet",
    "'none ', none, .parquet"
  })
  void codecNamesAreReadInAnyCaseAndUncompressedMeansNone(
      String given, String codec, String extension) {
    ParquetOutput o = ParquetOutput.to("out").withCompression(given);
    assertEquals(codec, o.compression());
    assertEquals(extension, o.extension());
  }

  @ParameterizedTest
  @ValueSource(strings = {"gzip", "lz4", "brotli", "lzo", "snapy", "", "zstd2", "snappy,zstd"})
  void otherCodecNamesAreRefusedNamingTheOptionAndTheOnesAccepted(String codec) {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> ParquetOutput.to("out").withCompression(codec));
    String m = e.getMessage();
    assertTrue(m.contains("compression"), m);
    assertTrue(m.contains("'" + codec + "'"), m);
    assertTrue(m.contains("snappy") && m.contains("zstd") && m.contains("none"), m);
  }

  @Test
  void aNullCodecIsRefusedNamingTheOption() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> ParquetOutput.to("out").withCompression(null));
    assertTrue(e.getMessage().contains("compression"), e.getMessage());
  }

  @Test
  void rowGroupRowsBelow1000AreRefusedNamingTheOptionAndTheValue() {
    assertEquals(1000, ParquetOutput.to("out").withRowGroupRows(1000).rowGroupRows());
    for (int bad : new int[] {999, 1, 0, -1, Integer.MIN_VALUE}) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class, () -> ParquetOutput.to("out").withRowGroupRows(bad));
      assertTrue(e.getMessage().contains("rowGroupRows"), e.getMessage());
      assertTrue(e.getMessage().contains(Integer.toString(bad)), e.getMessage());
      assertTrue(e.getMessage().contains("1000"), e.getMessage());
    }
  }

  @Test
  void rowGroupBytesBelowOneMiBAreRefusedNamingTheOptionAndTheValue() {
    assertEquals(1L << 20, ParquetOutput.to("out").withRowGroupBytes(1L << 20).rowGroupBytes());
    for (long bad : new long[] {(1L << 20) - 1, 1024, 0, -1, Long.MIN_VALUE}) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class, () -> ParquetOutput.to("out").withRowGroupBytes(bad));
      assertTrue(e.getMessage().contains("rowGroupBytes"), e.getMessage());
      assertTrue(e.getMessage().contains(Long.toString(bad)), e.getMessage());
      assertTrue(e.getMessage().contains("1048576"), e.getMessage());
    }
  }

  @Test
  void negativeRowsPerFileAreRefusedNamingTheOption() {
    assertEquals(0, ParquetOutput.to("out").withRowsPerFile(0).rowsPerFile());
    assertEquals(1, ParquetOutput.to("out").withRowsPerFile(1).rowsPerFile());
    for (long bad : new long[] {-1, Long.MIN_VALUE}) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class, () -> ParquetOutput.to("out").withRowsPerFile(bad));
      assertTrue(e.getMessage().contains("rowsPerFile"), e.getMessage());
      assertTrue(e.getMessage().contains(Long.toString(bad)), e.getMessage());
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "\t\n"})
  void anEmptyPathIsRefusedSayingSo(String path) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> ParquetOutput.to(path));
    assertTrue(e.getMessage().contains("path"), e.getMessage());
    assertTrue(e.getMessage().contains("empty"), e.getMessage());
  }

  @Test
  void aNullPathIsRefused() {
    NullPointerException e = assertThrows(NullPointerException.class, () -> ParquetOutput.to(null));
    assertEquals("path", e.getMessage());
  }

  @Test
  void theDescriptionNamesEveryOption() {
    String s =
        ParquetOutput.to("/x/y")
            .withCompression("zstd")
            .withRowGroupRows(2000)
            .withRowGroupBytes(3L << 20)
            .withRowsPerFile(77)
            .toString();
    assertTrue(s.contains("/x/y") && s.contains("zstd"), s);
    assertTrue(s.contains("2000") && s.contains(Long.toString(3L << 20)) && s.contains("77"), s);
    assertTrue(ParquetOutput.to("/x/y").toString().contains("one file per task"));
  }
}
