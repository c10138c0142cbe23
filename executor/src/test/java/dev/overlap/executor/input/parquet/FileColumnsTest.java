package dev.overlap.executor.input.parquet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashMap;
import java.util.Map;
import org.apache.parquet.hadoop.metadata.FileMetaData;
import org.apache.parquet.schema.MessageTypeParser;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/** Which files the GPU decodes as Spark would, and how their columns answer a kernel's input. */
class FileColumnsTest {
  static final String FILE =
      "message spark_schema {"
          + " optional int32 i; optional int64 L; optional binary s (STRING);"
          + " optional int32 day (DATE); optional int64 ts (TIMESTAMP(MICROS,true));"
          + " optional int64 ntz (TIMESTAMP(MICROS,false)); optional int96 old;"
          + " optional int64 m (DECIMAL(12,2)); optional int32 small (DECIMAL(5,2));"
          + " optional int32 b8 (INTEGER(8,true)); optional float f;"
          + " optional group g { optional int32 x; }"
          + " repeated int32 r; }";

  static FileMetaData file(Map<String, String> kv) {
    return new FileMetaData(MessageTypeParser.parseMessageType(FILE), kv, "test");
  }

  static ScanColumns scan(boolean caseSensitive, String rebase, Object... nameType) {
    String[] names = new String[nameType.length / 2];
    StructType s = new StructType();
    for (int i = 0; i < names.length; i++) {
      names[i] = (String) nameType[2 * i];
      s = s.add("k" + i, (DataType) nameType[2 * i + 1]);
    }
    return new ScanColumns(names, s, caseSensitive, rebase);
  }

  static String why(ScanColumns s, Map<String, String> kv) {
    return assertThrows(NotForGpu.class, () -> FileColumns.of(s, file(kv), "f.parquet")).reason();
  }

  @Test
  void columnsAreDecodedInFileOrderAndMatchedIgnoringCaseByDefault() throws Exception {
    FileColumns c =
        FileColumns.of(
            scan(
                false,
                "CORRECTED",
                "S",
                DataTypes.StringType,
                "l",
                DataTypes.LongType,
                "missing",
                DataTypes.IntegerType,
                "i",
                DataTypes.LongType),
            file(Map.of()),
            "f.parquet");
    assertArrayEquals(new String[] {"i", "L", "s"}, c.include());
    assertEquals(2, c.decodedIndex(0));
    assertEquals(1, c.decodedIndex(1));
    assertEquals(-1, c.decodedIndex(2));
    assertEquals(0, c.decodedIndex(3));
  }

  @Test
  void caseSensitiveMatchingReadsNullsForANameOfOtherCase() throws Exception {
    FileColumns c =
        FileColumns.of(
            scan(true, "CORRECTED", "l", DataTypes.LongType, "i", DataTypes.IntegerType),
            file(Map.of()),
            "f.parquet");
    assertEquals(-1, c.decodedIndex(0));
    assertEquals(0, c.decodedIndex(1));
  }

  @Test
  void everySupportedTypeMatches() throws Exception {
    FileColumns.of(
        scan(
            false,
            "CORRECTED",
            "day",
            DataTypes.DateType,
            "ts",
            DataTypes.TimestampType,
            "ntz",
            DataTypes.TimestampNTZType,
            "m",
            DataTypes.createDecimalType(12, 2),
            "small",
            DataTypes.createDecimalType(9, 2),
            "b8",
            DataTypes.ByteType,
            "f",
            DataTypes.DoubleType),
        file(Map.of()),
        "f.parquet");
  }

  @Test
  void whatTheGpuWouldNotReadAsSparkDoesIsNamed() {
    assertEquals(
        "f.parquet: column 'old' is optional int96 old, read as timestamp_ntz: INT96 is read only"
            + " as a timestamp",
        why(scan(false, "CORRECTED", "old", DataTypes.TimestampNTZType), Map.of()));
    assertEquals(
        "f.parquet: column 'g' is optional group g {\n  optional int32 x;\n}, read as int: g is a"
            + " group, read as int",
        why(scan(false, "CORRECTED", "g", DataTypes.IntegerType), Map.of()));
    assertEquals(
        "f.parquet: column 'm' is optional int64 m (DECIMAL(12,2)), read as decimal(12,3): not a"
            + " type the GPU decode reads as Spark does",
        why(scan(false, "CORRECTED", "m", DataTypes.createDecimalType(12, 3)), Map.of()));
    assertEquals(
        "f.parquet: column 'ts' is optional int64 ts (TIMESTAMP(MICROS,true)), read as"
            + " timestamp_ntz: not a type the GPU decode reads as Spark does",
        why(scan(false, "CORRECTED", "ts", DataTypes.TimestampNTZType), Map.of()));
    assertEquals(
        "f.parquet: column 'r' is repeated int32 r, read as int: a repeated field outside a LIST"
            + " or MAP (a legacy list) is read on the host",
        why(scan(false, "CORRECTED", "r", DataTypes.IntegerType), Map.of()));
    assertEquals(
        "f.parquet has none of the columns read",
        why(scan(false, "CORRECTED", "nope", DataTypes.IntegerType), Map.of()));
  }

  @Test
  void twoColumnsMatchingOneNameIgnoringCaseGoToTheHost() {
    String two = "message m { optional int32 a; optional int32 A; }";
    NotForGpu e =
        assertThrows(
            NotForGpu.class,
            () ->
                FileColumns.of(
                    scan(false, "CORRECTED", "a", DataTypes.IntegerType),
                    new FileMetaData(MessageTypeParser.parseMessageType(two), Map.of(), "t"),
                    "f.parquet"));
    assertEquals("f.parquet: several columns match 'a' when case is ignored", e.reason());
  }

  @Test
  void int96IsDecodedOnlyWhenSparkWroteItInTheProlepticCalendar() throws Exception {
    ScanColumns old = scan(false, "CORRECTED", "old", DataTypes.TimestampType);
    FileColumns.of(old, file(Map.of(FileColumns.SPARK_VERSION, "4.0.4")), "f.parquet");
    FileColumns.of(old, file(Map.of(FileColumns.SPARK_VERSION, "3.1.1")), "f.parquet");
    assertEquals(
        "f.parquet: INT96 timestamps from a writer other than Spark are read on the host",
        why(old, Map.of()));
    assertEquals(
        "f.parquet: INT96 timestamps written by Spark 3.0.3 in the legacy calendar are read on"
            + " the host",
        why(old, Map.of(FileColumns.SPARK_VERSION, "3.0.3")));
    assertEquals(
        "f.parquet: INT96 timestamps written by Spark 3.5.0 in the legacy calendar are read on"
            + " the host",
        why(old, Map.of(FileColumns.SPARK_VERSION, "3.5.0", FileColumns.LEGACY_INT96, "")));
  }

  @Test
  void datesWrittenInTheLegacyCalendarGoToTheHost() throws Exception {
    ScanColumns dates = scan(false, "CORRECTED", "day", DataTypes.DateType);
    assertEquals(
        "f.parquet: written by Spark 2.4.8 in the legacy calendar; its dates and timestamps are"
            + " rebased on the host",
        why(dates, Map.of(FileColumns.SPARK_VERSION, "2.4.8")));
    Map<String, String> legacy = new HashMap<>();
    legacy.put(FileColumns.SPARK_VERSION, "3.5.1");
    legacy.put(FileColumns.LEGACY_DATETIME, "");
    assertEquals(
        "f.parquet: written by Spark 3.5.1 in the legacy calendar; its dates and timestamps are"
            + " rebased on the host",
        why(dates, legacy));
    assertEquals(
        "f.parquet: spark.sql.parquet.datetimeRebaseModeInRead=LEGACY rebases its dates and"
            + " timestamps on the host",
        why(scan(false, "LEGACY", "day", DataTypes.DateType), Map.of()));
    // A modern Spark file, or another writer with the session's CORRECTED mode: the GPU.
    FileColumns.of(dates, file(Map.of(FileColumns.SPARK_VERSION, "4.0.4")), "f.parquet");
    FileColumns.of(dates, file(Map.of()), "f.parquet");
    // The legacy mode matters only for dates and timestamps.
    assertNull(
        FileColumns.mismatch(
            MessageTypeParser.parseMessageType(FILE).getType("i"), DataTypes.IntegerType));
    FileColumns.of(scan(false, "LEGACY", "i", DataTypes.IntegerType), file(Map.of()), "f.parquet");
  }

  private static String nested(String fileType, DataType want) {
    return FileColumns.mismatch(
        MessageTypeParser.parseMessageType("message m { " + fileType + " }").getType(0), want);
  }

  @Test
  void standardNestedLayoutsAreDecodedOnTheGpuAndLegacyOnesOnTheHost() {
    DataType ints = DataTypes.createArrayType(DataTypes.IntegerType);
    // Spark's, Arrow's and parquet-mr's three-level list.
    assertNull(
        nested(
            "optional group a (LIST) { repeated group list { optional int32 element; } }", ints));
    // Two-level lists, which Spark reads by rules of its own.
    assertEquals(
        "a is a legacy list layout, read on the host",
        nested("optional group a (LIST) { repeated group array { optional int32 x; } }", ints));
    assertEquals(
        "a is a legacy list layout, read on the host",
        nested("optional group a (LIST) { repeated int32 element; }", ints));
    assertEquals(
        "a repeated field outside a LIST or MAP (a legacy list) is read on the host",
        nested("repeated int32 a;", ints));
    // Maps of required keys.
    DataType map = DataTypes.createMapType(DataTypes.StringType, DataTypes.LongType);
    assertNull(
        nested(
            "optional group m (MAP) { repeated group key_value { required binary key (UTF8);"
                + " optional int64 value; } }",
            map));
    // A struct whose fields the scan pruned, or a leaf that would need a cast.
    StructType ab = new StructType().add("a", DataTypes.IntegerType).add("b", DataTypes.StringType);
    String group = "optional group s { optional int32 a; optional binary b (UTF8); }";
    assertNull(nested(group, ab));
    assertEquals(
        "s has 2 fields, the scan reads 1",
        nested(group, new StructType().add("a", DataTypes.IntegerType)));
    assertEquals(
        "s.a: a widened type inside a nested column is read on the host",
        nested(
            group, new StructType().add("a", DataTypes.LongType).add("b", DataTypes.StringType)));
    // A decimal inside a nested column decodes to its own width only: no cast there.
    String decimals = "optional group s { optional int32 a (DECIMAL(5,2)); }";
    assertNull(nested(decimals, new StructType().add("a", DataTypes.createDecimalType(5, 2))));
    assertEquals(
        "s.a: a widened type inside a nested column is read on the host",
        nested(decimals, new StructType().add("a", DataTypes.createDecimalType(12, 2))));
    // Binary: at the top, decoded as strings and seen as bytes; inside, on the host.
    assertNull(nested("optional binary blob;", DataTypes.BinaryType));
    assertEquals(
        "a.element: binary and INT96 inside a nested column are read on the host",
        nested(
            "optional group a (LIST) { repeated group list { optional binary element; } }",
            DataTypes.createArrayType(DataTypes.BinaryType)));
  }
}
