package dev.overlap.executor.testing;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Date;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.Function1;

/**
 * Rows of every supported type, with nulls in every column: as a job sees them ({@link #row}, for
 * Spark-level tests) and as Spark holds them inside ({@link #internalValues}, for packing tests).
 */
public final class TestData {
  public static final StructType SCHEMA =
      new StructType(
          new StructField[] {
            f("id", DataTypes.LongType),
            f("b", DataTypes.BooleanType),
            f("i8", DataTypes.ByteType),
            f("i16", DataTypes.ShortType),
            f("i32", DataTypes.IntegerType),
            f("i64", DataTypes.LongType),
            f("f32", DataTypes.FloatType),
            f("f64", DataTypes.DoubleType),
            f("d", DataTypes.DateType),
            f("ts", DataTypes.TimestampType),
            f("s", DataTypes.StringType),
            f("dec9", DataTypes.createDecimalType(9, 2)),
            f("dec18", DataTypes.createDecimalType(18, 4)),
            f("dec38", DataTypes.createDecimalType(38, 10)),
            f("ntz", DataTypes.TimestampNTZType),
          });

  private static final Function1<Object, Object> TO_INTERNAL =
      CatalystTypeConverters.createToCatalystConverter(SCHEMA);

  private TestData() {}

  private static StructField f(String name, org.apache.spark.sql.types.DataType t) {
    return new StructField(name, t, true, Metadata.empty());
  }

  public static int col(String name) {
    return SCHEMA.fieldIndex(name);
  }

  public static Row row(long i) {
    Object[] v = new Object[SCHEMA.fields().length];
    v[0] = i;
    v[1] = i % 2 == 0;
    v[2] = (byte) (i % 120 - 60);
    v[3] = (short) (i % 30000 - 15000);
    v[4] = (int) (i * 7919 % 2_000_000_000L) - 1_000_000;
    v[5] = i * 1_000_000_007L - (1L << 40);
    v[6] = (float) (i * 0.5 - 3.25);
    v[7] = i * 1.0e-3 - 17.125;
    v[8] = Date.valueOf(java.time.LocalDate.ofEpochDay(18_000 + i % 5000));
    v[9] =
        Timestamp.from(java.time.Instant.ofEpochSecond(1_700_000_000L + i * 37, 1000 * (i % 999)));
    v[10] = i % 5 == 0 ? "" : "välue-" + i + "-" + "x".repeat((int) (i % 11));
    v[11] = BigDecimal.valueOf(i * 12345L % 99_999_999 - 9_999_999, 2);
    v[12] = BigDecimal.valueOf(i * 987_654_321L - 5, 4);
    v[13] =
        new BigDecimal(
            new BigInteger("1234567890123456789012345").multiply(BigInteger.valueOf(i - 20)), 10);
    // Wall-clock times without a zone, before and after 1970.
    v[14] =
        java.time.LocalDateTime.ofEpochSecond(
            -1_000_000_000L + i * 86_413L, 1000 * (int) (i % 999), java.time.ZoneOffset.UTC);
    for (int c = 1; c < v.length; c++) {
      if ((i + c) % 7 == 0) {
        v[c] = null;
      }
    }
    return RowFactory.create(v);
  }

  /**
   * The values of {@link #row}{@code (i)} as Spark holds them inside: UTF8String, Decimal, days and
   * microseconds since the epoch.
   */
  public static Object[] internalValues(long i) {
    return ((GenericInternalRow) TO_INTERNAL.apply(row(i))).values().clone();
  }

  public static List<Row> rows(long from, long to) {
    List<Row> out = new ArrayList<>();
    for (long i = from; i < to; i++) {
      out.add(row(i));
    }
    return out;
  }

  public static Dataset<Row> frame(SparkSession spark, int n, int partitions) {
    return spark.createDataFrame(rows(0, n), SCHEMA).repartition(partitions);
  }

  /**
   * As {@link #frame}, with the first partition's rows dropped below the plan (where no optimizer
   * rule reaches): a first task with no rows beside tasks with rows.
   */
  public static Dataset<Row> frameWithFirstPartitionEmpty(
      SparkSession spark, int n, int partitions) {
    return spark.createDataFrame(
        frame(spark, n, partitions)
            .javaRDD()
            .mapPartitionsWithIndex(
                (i, it) -> i == 0 ? java.util.Collections.<Row>emptyIterator() : it, true),
        SCHEMA);
  }

  /** Rows sorted by their first column, as strings, for order-insensitive comparison. */
  public static List<String> sorted(List<Row> rows) {
    List<Row> copy = new ArrayList<>(rows);
    copy.sort((a, b) -> Long.compare(a.getLong(0), b.getLong(0)));
    List<String> out = new ArrayList<>();
    for (Row r : copy) {
      Object[] v = new Object[r.length()];
      for (int i = 0; i < v.length; i++) {
        v[i] = r.get(i);
      }
      out.add(Arrays.deepToString(v));
    }
    return out;
  }
}
