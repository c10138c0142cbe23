package dev.overlap.executor.testing;

import java.sql.Date;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A string column and random nested columns of a seed: arrays, structs and maps of numbers,
 * strings, booleans, dates and each other, up to three levels deep, nullable or not at each level,
 * with null, empty and long lists; and a random way to write them (codec, page version, page size
 * and row count, row group size, dictionary).
 */
public final class RandomNested {
  private final Random rnd;
  private final long seed;
  public final StructType schema;

  public RandomNested(long seed) {
    this.seed = seed;
    rnd = new Random(seed);
    // A top-level string too: version 2 pages write it in DELTA_BYTE_ARRAY encoding, as the
    // strings inside lists and maps that the GPU scan leaves to the host.
    StructType s =
        new StructType().add("id", DataTypes.LongType, false).add("s", DataTypes.StringType, true);
    int columns = 1 + rnd.nextInt(4);
    for (int c = 0; c < columns; c++) {
      s = s.add("c" + c, nested(0), rnd.nextBoolean());
    }
    schema = s;
  }

  private DataType nested(int depth) {
    return switch (rnd.nextInt(3)) {
      case 0 -> DataTypes.createArrayType(any(depth + 1), rnd.nextBoolean());
      case 1 -> struct(depth + 1);
      default -> DataTypes.createMapType(DataTypes.StringType, any(depth + 1), rnd.nextBoolean());
    };
  }

  private StructType struct(int depth) {
    StructType s = new StructType();
    int fields = 1 + rnd.nextInt(3);
    for (int f = 0; f < fields; f++) {
      s = s.add("f" + f, any(depth), rnd.nextBoolean());
    }
    return s;
  }

  private DataType any(int depth) {
    if (depth < 3 && rnd.nextInt(3) == 0) {
      return nested(depth);
    }
    return switch (rnd.nextInt(6)) {
      case 0 -> DataTypes.IntegerType;
      case 1 -> DataTypes.LongType;
      case 2 -> DataTypes.DoubleType;
      case 3 -> DataTypes.StringType;
      case 4 -> DataTypes.BooleanType;
      default -> DataTypes.DateType;
    };
  }

  /** {@code rows} rows of the schema, in {@code partitions} partitions. */
  public Dataset<Row> frame(SparkSession spark, int rows, int partitions) {
    List<Row> out = new ArrayList<>();
    for (long i = 0; i < rows; i++) {
      Object[] v = new Object[schema.fields().length];
      v[0] = i;
      for (int c = 1; c < v.length; c++) {
        StructField f = schema.fields()[c];
        v[c] = value(f.dataType(), f.nullable());
      }
      out.add(RowFactory.create(v));
    }
    return spark.createDataFrame(out, schema).repartition(partitions);
  }

  private Object value(DataType t, boolean nullable) {
    if (nullable && rnd.nextInt(8) == 0) {
      return null;
    }
    if (t instanceof ArrayType a) {
      int n = length();
      List<Object> l = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        l.add(value(a.elementType(), a.containsNull()));
      }
      return l;
    }
    if (t instanceof MapType m) {
      int n = length();
      Map<String, Object> map = new LinkedHashMap<>();
      for (int i = 0; i < n; i++) {
        map.put("k" + rnd.nextInt(1000), value(m.valueType(), m.valueContainsNull()));
      }
      return map;
    }
    if (t instanceof StructType s) {
      Object[] v = new Object[s.fields().length];
      for (int i = 0; i < v.length; i++) {
        v[i] = value(s.fields()[i].dataType(), s.fields()[i].nullable());
      }
      return RowFactory.create(v);
    }
    if (t == DataTypes.IntegerType) {
      return rnd.nextInt();
    } else if (t == DataTypes.LongType) {
      return rnd.nextLong();
    } else if (t == DataTypes.DoubleType) {
      return rnd.nextGaussian() * 1e6;
    } else if (t == DataTypes.StringType) {
      return "s" + Integer.toString(rnd.nextInt(1 << 20), 36).repeat(1 + rnd.nextInt(3));
    } else if (t == DataTypes.BooleanType) {
      return rnd.nextBoolean();
    }
    return Date.valueOf(LocalDate.ofEpochDay(rnd.nextInt(40_000) - 10_000));
  }

  /** Mostly short, sometimes empty, now and then long (several pages of a small page size). */
  private int length() {
    int k = rnd.nextInt(20);
    return k < 3 ? 0 : k < 18 ? 1 + rnd.nextInt(4) : 20 + rnd.nextInt(200);
  }

  /** Spark writer options of this seed: codec, page version and sizes, row groups, dictionary. */
  public Map<String, String> writeOptions() {
    Random rnd = new Random(seed * 31 + 7); // the same whatever was drawn before
    String[] codecs = {"snappy", "zstd", "none", "gzip", "lz4_raw"};
    return Map.of(
        "compression", codecs[rnd.nextInt(codecs.length)],
        "parquet.writer.version", rnd.nextBoolean() ? "v1" : "v2",
        "parquet.page.size", String.valueOf(new int[] {256, 2048, 65536}[rnd.nextInt(3)]),
        "parquet.page.row.count.limit", String.valueOf(new int[] {5, 100, 20000}[rnd.nextInt(3)]),
        "parquet.block.size", String.valueOf(new int[] {32 << 10, 1 << 20}[rnd.nextInt(2)]),
        "parquet.enable.dictionary", String.valueOf(rnd.nextBoolean()));
  }
}
