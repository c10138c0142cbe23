package dev.overlap.executor.output.parquet;

import ai.rapids.cudf.ColumnWriterOptions;
import ai.rapids.cudf.CompressionType;
import ai.rapids.cudf.ParquetWriterOptions;
import dev.overlap.executor.api.ParquetOutput;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * cuDF's Parquet writer options for a kernel's output schema: the columns' names, decimals with
 * their precision, timestamps as INT64 microseconds, the compression and row-group sizes chosen,
 * and the Spark schema and version in the file's key-value metadata, as Spark's own writer puts
 * them, so that Spark reads back exactly the declared types in the proleptic Gregorian calendar.
 * Every column is written as optional: Spark reads file sources as nullable anyway. Nested columns
 * and binary are laid out as Spark's writer lays them out ({@link #add}).
 */
public final class ParquetWriterSchema {
  /** The key under which Spark keeps a file's Spark schema. */
  public static final String SPARK_SCHEMA_KEY = "org.apache.spark.sql.parquet.row.metadata";

  /** The key under which Spark keeps the version that wrote a file. */
  public static final String SPARK_VERSION_KEY = "org.apache.spark.version";

  private ParquetWriterSchema() {}

  public static ParquetWriterOptions options(StructType schema, ParquetOutput output) {
    ParquetWriterOptions.Builder b = ParquetWriterOptions.builder();
    for (StructField f : schema.fields()) {
      add(b, f.name(), f.dataType(), true);
    }
    return b.withCompressionType(compression(output.compression()))
        .withRowGroupSizeRows(output.rowGroupRows())
        .withRowGroupSizeBytes(output.rowGroupBytes())
        .withMetadata(SPARK_SCHEMA_KEY, schema.json())
        .withMetadata(SPARK_VERSION_KEY, org.apache.spark.package$.MODULE$.SPARK_VERSION_SHORT())
        .build();
  }

  /**
   * Adds column {@code name} of type {@code t} to {@code b}: nested types as Spark's writer lays
   * them out (a list's element, a map's {@code key_value} entries with a required key, a struct's
   * fields), binary as BINARY, every other type as above.
   */
  @SuppressWarnings({"rawtypes", "unchecked"})
  private static void add(
      ColumnWriterOptions.NestedBuilder b, String name, DataType t, boolean nullable) {
    if (t instanceof DecimalType d) {
      b.withDecimalColumn(name, d.precision(), nullable);
    } else if (t instanceof TimestampType || t instanceof TimestampNTZType) {
      b.withTimestampColumn(name, false, nullable);
    } else if (t instanceof BinaryType) {
      b.withBinaryColumn(name, nullable);
    } else if (t instanceof ArrayType a) {
      ColumnWriterOptions.ListBuilder list = ColumnWriterOptions.listBuilder(name, nullable);
      add(list, "element", a.elementType(), a.containsNull());
      b.withListColumn(list.build());
    } else if (t instanceof MapType m) {
      b.withMapColumn(
          ColumnWriterOptions.mapColumn(
              name,
              single("key", m.keyType(), false),
              single("value", m.valueType(), m.valueContainsNull()),
              nullable));
    } else if (t instanceof StructType s) {
      ColumnWriterOptions.StructBuilder struct = ColumnWriterOptions.structBuilder(name, nullable);
      for (StructField f : s.fields()) {
        add(struct, f.name(), f.dataType(), true);
      }
      b.withStructColumn(struct.build());
    } else {
      b.withColumns(nullable, name);
    }
  }

  /** The options of one column on its own (a map's key or value). */
  private static ColumnWriterOptions single(String name, DataType t, boolean nullable) {
    ColumnWriterOptions.StructBuilder holder = ColumnWriterOptions.structBuilder("holder", false);
    add(holder, name, t, nullable);
    return holder.build().getChildColumnOptions()[0];
  }

  /** For each column, whether it holds timestamps without time zone (see {@link FooterRewrite}). */
  static boolean[] localTimestamps(StructType schema) {
    boolean[] ntz = new boolean[schema.fields().length];
    for (int i = 0; i < ntz.length; i++) {
      ntz[i] = schema.fields()[i].dataType() instanceof TimestampNTZType;
    }
    return ntz;
  }

  static CompressionType compression(String name) {
    return switch (name) {
      case "snappy" -> CompressionType.SNAPPY;
      case "zstd" -> CompressionType.ZSTD;
      case "none" -> CompressionType.NONE;
      default -> throw new IllegalArgumentException("compression " + name);
    };
  }
}
