package dev.overlap.jobs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Timestamp;
import java.time.Instant;
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The features job on input TPC-H does not have: nulls in every column (each gets an indicator and
 * an imputed value), timestamps, ties in the vocabulary, and a column of a type it cannot handle,
 * which must come through unchanged and still beside its own row.
 */
class FeaturesJobTest {
  static SparkSession spark;

  @BeforeAll
  static void start() {
    spark =
        SparkSession.builder()
            .master("local[2]")
            .config("spark.plugins", "dev.overlap.executor.OverlapPlugin")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.session.timeZone", "UTC")
            .getOrCreate();
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  @Test
  void typesBeyondTpchAndAPassThroughColumn() {
    StructType schema =
        new StructType()
            .add("id", DataTypes.LongType)
            .add("city", DataTypes.StringType)
            .add("seen", DataTypes.TimestampType)
            .add("day", DataTypes.DateType)
            .add("blob", DataTypes.BinaryType);
    List<Row> rows = new ArrayList<>();
    String[] cities = {"b", "a", "c", "a", "b", "d"}; // a and b tie at 2: a comes first
    for (int i = 0; i < 60; i++) {
      rows.add(
          RowFactory.create(
              i % 10 == 9 ? null : (long) i,
              i % 7 == 6 ? null : cities[i % cities.length],
              i % 5 == 4
                  ? null
                  : Timestamp.from(Instant.parse("2024-03-03T21:15:00Z").plusSeconds(3600L * i)),
              i % 4 == 1 ? null : java.sql.Date.valueOf(LocalDate.of(2023, 12, 30).plusDays(i)),
              new byte[] {(byte) i, 42}));
    }
    Dataset<Row> in = spark.createDataFrame(rows, schema).repartition(3);
    Dataset<Row> out = FeaturesJob.features(in, 2, null);

    List<String> cols = List.of(out.columns());
    assertEquals(
        List.of(
            "id_std",
            "id_log1p",
            "id_isnull",
            "id_imputed",
            "city_idx",
            "city_isnull",
            "city_imputed",
            "seen_hour",
            "seen_dow",
            "seen_month",
            "seen_isnull",
            "seen_imputed",
            "day_dow",
            "day_month",
            "day_isnull",
            "day_imputed",
            "blob"),
        cols);
    double mean = in.selectExpr("avg(id)").first().getDouble(0);
    double std = in.selectExpr("stddev_samp(id)").first().getDouble(0);
    // Imputed values, from Spark SQL: the most frequent city (ties by value), the mean instant and
    // the mean day, each rounded half up.
    String mode =
        in.where("city is not null")
            .groupBy("city")
            .count()
            .orderBy(functions.col("count").desc(), functions.col("city"))
            .first()
            .getString(0);
    Row means =
        in.selectExpr(
                "cast(round(avg(unix_micros(seen))) as bigint)",
                "cast(round(avg(unix_date(day))) as int)")
            .first();
    Instant meanSeen = Instant.EPOCH.plus(means.getLong(0), ChronoUnit.MICROS);
    LocalDate meanDay = LocalDate.ofEpochDay(means.getInt(1));
    for (Row r : out.collectAsList()) {
      byte[] blob = r.getAs("blob");
      int i = blob[0];
      assertArrayEquals(new byte[] {(byte) i, 42}, blob, "blob kept with its row");
      boolean idNull = i % 10 == 9;
      assertEquals(idNull, r.<Boolean>getAs("id_isnull"));
      double imputed = idNull ? mean : i;
      assertEquals(imputed, r.<Double>getAs("id_imputed"), 1e-12);
      assertEquals((imputed - mean) / std, r.<Double>getAs("id_std"), 1e-12);
      assertEquals(Math.log(1 + imputed), r.<Double>getAs("id_log1p"), 1e-12);
      String city = i % 7 == 6 ? null : cities[i % cities.length];
      // Vocabulary of 2 by count desc, then value: counts a and b tie, so a is 0, b is 1.
      int expectedIdx = "a".equals(city) ? 0 : "b".equals(city) ? 1 : 2;
      assertEquals(expectedIdx, r.<Integer>getAs("city_idx"), "city " + city);
      assertEquals(city == null, r.<Boolean>getAs("city_isnull"));
      assertEquals(city == null ? mode : city, r.<String>getAs("city_imputed"));
      if (i % 5 == 4) {
        assertTrue(r.<Boolean>getAs("seen_isnull"));
        assertTrue(r.isNullAt(r.fieldIndex("seen_hour")));
        assertEquals(meanSeen, r.<Timestamp>getAs("seen_imputed").toInstant());
      } else {
        var t =
            Instant.parse("2024-03-03T21:15:00Z")
                .plusSeconds(3600L * i)
                .atZone(java.time.ZoneOffset.UTC);
        assertFalse(r.<Boolean>getAs("seen_isnull"));
        assertEquals(t.getHour(), r.<Integer>getAs("seen_hour"));
        assertEquals(t.getDayOfWeek().getValue() % 7 + 1, r.<Integer>getAs("seen_dow"));
        assertEquals(t.getMonthValue(), r.<Integer>getAs("seen_month"));
        assertEquals(t.toInstant(), r.<Timestamp>getAs("seen_imputed").toInstant());
      }
      if (i % 4 == 1) {
        assertTrue(r.<Boolean>getAs("day_isnull"));
        assertTrue(r.isNullAt(r.fieldIndex("day_dow")));
        assertEquals(meanDay, r.<java.sql.Date>getAs("day_imputed").toLocalDate());
      } else {
        LocalDate d = LocalDate.of(2023, 12, 30).plusDays(i);
        assertFalse(r.<Boolean>getAs("day_isnull"));
        assertEquals(d.getDayOfWeek().getValue() % 7 + 1, r.<Integer>getAs("day_dow"));
        assertEquals(d.getMonthValue(), r.<Integer>getAs("day_month"));
        assertEquals(d, r.<java.sql.Date>getAs("day_imputed").toLocalDate());
      }
    }
    assertEquals(60, out.count());
  }
}
