package dev.overlap.executor.output.parquet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.ColumnWriterOptions;
import ai.rapids.cudf.CompressionType;
import ai.rapids.cudf.ParquetWriterOptions;
import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.testing.AllTypesKernel;
import dev.overlap.executor.testing.TestData;
import java.util.Arrays;
import java.util.Map;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** cuDF's Parquet writer options built from a Spark schema; no GPU is needed to build them. */
class ParquetWriterSchemaTest {
  private static final StructType OUT = new AllTypesKernel().outputSchema(TestData.SCHEMA);

  private static ParquetWriterOptions options(StructType schema, ParquetOutput output) {
    return ParquetWriterSchema.options(schema, output);
  }

  @Test
  void everyColumnIsNamedInOrderAndWrittenAsOptional() {
    ParquetWriterOptions o = options(TestData.SCHEMA, ParquetOutput.to("out"));
    ColumnWriterOptions[] cols = o.getChildColumnOptions();
    assertEquals(TestData.SCHEMA.fields().length, o.getTopLevelChildren());
    assertArrayEquals(
        TestData.SCHEMA.fieldNames(),
        Arrays.stream(cols).map(ColumnWriterOptions::getColumnName).toArray(String[]::new));
    for (ColumnWriterOptions c : cols) {
      assertTrue(c.isNullable(), c.getColumnName());
      assertEquals(0, c.getChildColumnOptions().length, c.getColumnName());
    }
    // A column declared not nullable is still written as optional.
    ParquetWriterOptions out = options(OUT, ParquetOutput.to("out"));
    assertArrayEquals(
        OUT.fieldNames(),
        Arrays.stream(out.getChildColumnOptions())
            .map(ColumnWriterOptions::getColumnName)
            .toArray(String[]::new));
    assertFalse(OUT.apply("i32null").nullable());
    for (ColumnWriterOptions c : out.getChildColumnOptions()) {
      assertTrue(c.isNullable(), c.getColumnName());
    }
  }

  @Test
  void nestedColumnsAreLaidOutAsSparksWriterLaysThemOut() {
    ColumnWriterOptions[] cols =
        options(dev.overlap.executor.testing.NestedData.SCHEMA, ParquetOutput.to("out"))
            .getChildColumnOptions();
    // tags: a list (cuDF's placeholder child first), its element a string.
    ColumnWriterOptions tags = cols[1];
    assertEquals("tags", tags.getColumnName());
    assertEquals(2, tags.getChildColumnOptions().length);
    assertEquals("element", tags.getChildColumnOptions()[1].getColumnName());
    // rec: a struct of a and b, b a struct of c and the list d.
    ColumnWriterOptions rec = cols[3];
    assertArrayEquals(
        new String[] {"a", "b"},
        Arrays.stream(rec.getChildColumnOptions())
            .map(ColumnWriterOptions::getColumnName)
            .toArray(String[]::new));
    ColumnWriterOptions d = rec.getChildColumnOptions()[1].getChildColumnOptions()[1];
    assertEquals("d", d.getColumnName());
    assertEquals(2, d.getChildColumnOptions().length);
    // props: a map, its entries key_value holding a required key and an optional value.
    ColumnWriterOptions entries = cols[4].getChildColumnOptions()[1];
    assertEquals("key_value", entries.getColumnName());
    assertFalse(entries.getChildColumnOptions()[0].isNullable());
    assertTrue(entries.getChildColumnOptions()[1].isNullable());
    // blob: bytes, not a list of numbers.
    assertTrue(cols[5].isBinary(), "binary written as BINARY");
  }

  @Test
  void decimalsCarryTheirPrecisionAndTimestampsAreNotInt96() {
    ColumnWriterOptions[] cols =
        options(TestData.SCHEMA, ParquetOutput.to("out")).getChildColumnOptions();
    int decimals = 0;
    for (int i = 0; i < cols.length; i++) {
      StructField f = TestData.SCHEMA.fields()[i];
      if (f.dataType() instanceof DecimalType d) {
        decimals++;
        assertEquals(d.precision(), cols[i].getPrecision(), f.name());
      } else {
        assertEquals(ColumnWriterOptions.UNKNOWN_PRECISION, cols[i].getPrecision(), f.name());
      }
      assertFalse(cols[i].isTimestampTypeInt96(), f.name());
      assertFalse(cols[i].isBinary(), f.name());
    }
    assertEquals(3, decimals);
    assertEquals(9, cols[TestData.col("dec9")].getPrecision());
    assertEquals(18, cols[TestData.col("dec18")].getPrecision());
    assertEquals(38, cols[TestData.col("dec38")].getPrecision());
  }

  @Test
  void theSparkSchemaAndVersionAreInTheMetadataAsSparkWritesThem() {
    ParquetWriterOptions o = options(OUT, ParquetOutput.to("out"));
    Map<String, String> meta = o.getMetadata();
    assertEquals(2, meta.size(), meta.toString());
    assertEquals("org.apache.spark.sql.parquet.row.metadata", ParquetWriterSchema.SPARK_SCHEMA_KEY);
    assertEquals("org.apache.spark.version", ParquetWriterSchema.SPARK_VERSION_KEY);
    DataType parsed = DataType.fromJson(meta.get(ParquetWriterSchema.SPARK_SCHEMA_KEY));
    assertEquals(OUT, parsed);
    assertEquals(
        org.apache.spark.package$.MODULE$.SPARK_VERSION_SHORT(),
        meta.get(ParquetWriterSchema.SPARK_VERSION_KEY));
    assertTrue(meta.get(ParquetWriterSchema.SPARK_VERSION_KEY).matches("\\d+\\.\\d+\\.\\d+"));
  }

  @ParameterizedTest
  @CsvSource({"snappy, SNAPPY", "zstd, ZSTD", "none, NONE", "uncompressed, NONE"})
  void theCompressionIsTheOneChosen(String codec, CompressionType expected) {
    ParquetOutput output = ParquetOutput.to("out").withCompression(codec);
    assertEquals(expected, options(TestData.SCHEMA, output).getCompressionType());
    assertEquals(expected, ParquetWriterSchema.compression(output.compression()));
  }

  @Test
  void anUnknownCompressionNameIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> ParquetWriterSchema.compression("gzip"));
  }

  @Test
  void rowGroupSizesAreTheOnesChosen() {
    ParquetWriterOptions d = options(TestData.SCHEMA, ParquetOutput.to("out"));
    assertEquals(ParquetOutput.DEFAULT_ROW_GROUP_ROWS, d.getRowGroupSizeRows());
    assertEquals(ParquetOutput.DEFAULT_ROW_GROUP_BYTES, d.getRowGroupSizeBytes());
    ParquetWriterOptions o =
        options(
            TestData.SCHEMA,
            ParquetOutput.to("out").withRowGroupRows(12_345).withRowGroupBytes(3L << 20));
    assertEquals(12_345, o.getRowGroupSizeRows());
    assertEquals(3L << 20, o.getRowGroupSizeBytes());
  }

  @Test
  void onlyTimestampNtzColumnsAreLocalTimestamps() {
    boolean[] local = ParquetWriterSchema.localTimestamps(OUT);
    assertEquals(OUT.fields().length, local.length);
    for (int i = 0; i < local.length; i++) {
      assertEquals(
          OUT.fields()[i].dataType() instanceof TimestampNTZType, local[i], OUT.fields()[i].name());
    }
    assertTrue(local[TestData.col("ntz")]);
    assertFalse(local[TestData.col("ts")]);
  }
}
