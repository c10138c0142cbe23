package dev.overlap.executor.output.parquet;

import ai.rapids.cudf.CompressionType;
import ai.rapids.cudf.ParquetWriterOptions;
import dev.overlap.executor.api.ParquetOutput;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * cuDF's Parquet writer options for a kernel's output schema: the columns' names, decimals with
 * their precision, timestamps as INT64 microseconds, the compression and row-group sizes chosen,
 * and the Spark schema and version in the file's key-value metadata, as Spark's own writer puts
 * them, so that Spark reads back exactly the declared types in the proleptic Gregorian calendar.
 * Every column is written as optional: Spark reads file sources as nullable anyway.
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
      if (f.dataType() instanceof DecimalType d) {
        b.withDecimalColumn(f.name(), d.precision(), true);
      } else if (f.dataType() instanceof TimestampType
          || f.dataType() instanceof TimestampNTZType) {
        b.withTimestampColumn(f.name(), false, true);
      } else {
        b.withColumns(true, f.name());
      }
    }
    return b.withCompressionType(compression(output.compression()))
        .withRowGroupSizeRows(output.rowGroupRows())
        .withRowGroupSizeBytes(output.rowGroupBytes())
        .withMetadata(SPARK_SCHEMA_KEY, schema.json())
        .withMetadata(SPARK_VERSION_KEY, org.apache.spark.package$.MODULE$.SPARK_VERSION_SHORT())
        .build();
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
