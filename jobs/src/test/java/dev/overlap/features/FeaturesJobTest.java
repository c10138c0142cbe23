package dev.overlap.features;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.jobs.TestSessions;
import dev.overlap.jobs.cli.JobSummary;
import dev.overlap.jobs.cli.UsageException;
import dev.overlap.jobs.features.TestFeaturesJob;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The features job on input TPC-H does not have: nulls in every column (each gets an indicator and
 * an imputed value), timestamps, ties in the vocabulary, and a column of a type it cannot handle,
 * which must come through unchanged and still beside its own row; NaN and infinities, treated as
 * missing; input names that equal the job's own or its output's. Without a GPU the executor runs
 * the CPU implementation; the test tagged {@code gpu} needs the GPU and compares the two.
 */
class FeaturesJobTest {
  static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = TestSessions.withPlugin("local[2]");
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
    Dataset<Row> out = features(in, 2, null);

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

  // ---- nested and binary columns ---------------------------------------------------------------

  @Test
  void nestedAndBinaryColumnsPassThroughUnchanged(@TempDir Path dir) {
    StructType schema =
        new StructType()
            .add("n", DataTypes.DoubleType)
            .add("tags", DataTypes.createArrayType(DataTypes.StringType, true))
            .add(
                "rec",
                new StructType()
                    .add("a", DataTypes.IntegerType)
                    .add(
                        "b",
                        new StructType()
                            .add("c", DataTypes.createArrayType(DataTypes.LongType, true))))
            .add("props", DataTypes.createMapType(DataTypes.StringType, DataTypes.StringType))
            .add("blob", DataTypes.BinaryType);
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      int k = i % 4;
      rows.add(
          RowFactory.create(
              i * 0.5,
              k == 0 ? null : k == 1 ? List.of() : java.util.Arrays.asList("t" + i, null),
              k == 2
                  ? null
                  : RowFactory.create(
                      k == 3 ? null : i,
                      RowFactory.create(k == 1 ? null : java.util.Arrays.asList(1L, null))),
              k == 3 ? null : java.util.Map.of("k" + i, "v" + i),
              k == 1 ? null : new byte[] {(byte) i, 7}));
    }
    String in = dir.resolve("in").toString();
    spark.createDataFrame(rows, schema).repartition(3).write().parquet(in);
    String output = dir.resolve("out").toString();
    assertEquals(60, TestFeaturesJob.run(spark, in, output, 3, new JobSummary("features")));
    String json =
        "to_json(named_struct('t', tags, 'r', rec, 'p', props, 'b', base64(blob)),"
            + " map('ignoreNullFields', 'false'))";
    // Rows matched by n, which the job standardizes: the order of n_std is n's.
    List<Row> want = spark.read().parquet(in).orderBy("n").selectExpr(json).collectAsList();
    List<Row> got = spark.read().parquet(output).orderBy("n_std").selectExpr(json).collectAsList();
    assertEquals(want, got);
  }

  // ---- NaN and infinities --------------------------------------------------------------------

  private static final StructType NON_FINITE_SCHEMA =
      new StructType()
          .add("x", DataTypes.DoubleType) // nulls, NaN, +Infinity, -Infinity; negatives
          .add("y", DataTypes.DoubleType, false) // declared non-nullable, yet holds NaN
          .add("f", DataTypes.FloatType) // float: NaN, +Infinity, -Infinity, null
          .add("blob", DataTypes.BinaryType); // passes through; names the row

  private static Double x(int i) {
    switch (i % 10) {
      case 3:
        return Double.NaN;
      case 5:
        return Double.POSITIVE_INFINITY;
      case 7:
        return Double.NEGATIVE_INFINITY;
      case 9:
        return null;
      default:
        return i * 1.5 - 20;
    }
  }

  private static double y(int i) {
    return i % 8 == 2 ? Double.NaN : i * 0.25;
  }

  private static Float f(int i) {
    switch (i % 6) {
      case 1:
        return Float.POSITIVE_INFINITY;
      case 2:
        return Float.NEGATIVE_INFINITY; // the finite minimum stays non-negative: f keeps log1p
      case 4:
        return Float.NaN;
      case 5:
        return i % 12 == 5 ? null : (float) (i * 0.5);
      default:
        return (float) (i * 0.5 + 1);
    }
  }

  private static final int NON_FINITE_ROWS = 80;

  private static Dataset<Row> nonFiniteInput(Path dir) {
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < NON_FINITE_ROWS; i++) {
      rows.add(RowFactory.create(x(i), y(i), f(i), new byte[] {(byte) i}));
    }
    String path = dir.resolve("in").toString();
    spark.createDataFrame(rows, NON_FINITE_SCHEMA).repartition(3).write().parquet(path);
    return spark.read().parquet(path);
  }

  private static boolean missing(Number v) {
    return v == null || !Double.isFinite(v.doubleValue());
  }

  /** Mean and sample deviation by Spark SQL over the rows whose value is finite. */
  private static double[] finiteStats(Dataset<Row> in, String c) {
    Row r =
        in.where("not isnan(" + c + ") and abs(" + c + ") != double('Infinity')")
            .selectExpr("avg(cast(" + c + " as double))", "stddev_samp(cast(" + c + " as double))")
            .first();
    return new double[] {r.getDouble(0), r.getDouble(1)};
  }

  @Test
  void nanAndInfinitiesAreMissingValues(@TempDir Path dir) {
    Dataset<Row> in = nonFiniteInput(dir);
    String output = dir.resolve("out").toString();
    JobSummary summary = new JobSummary("features");
    long rows = TestFeaturesJob.run(spark, dir.resolve("in").toString(), output, 3, summary);
    assertEquals(NON_FINITE_ROWS, rows);
    Dataset<Row> out = spark.read().parquet(output);

    // Every float and double column has isnull and imputed, y too; x has negatives: no log1p.
    assertEquals(
        List.of(
            "x_std",
            "x_isnull",
            "x_imputed",
            "y_std",
            "y_log1p",
            "y_isnull",
            "y_imputed",
            "f_std",
            "f_log1p",
            "f_isnull",
            "f_imputed",
            "blob"),
        List.of(out.columns()));
    Map<String, double[]> stats = new HashMap<>();
    for (String c : List.of("x", "y", "f")) {
      stats.put(c, finiteStats(in, c));
    }
    long nonFinite = 0;
    int seen = 0;
    for (Row r : out.collectAsList()) {
      int i = r.<byte[]>getAs("blob")[0];
      Map<String, Number> values = new HashMap<>();
      values.put("x", x(i));
      values.put("y", y(i));
      values.put("f", f(i));
      for (String c : List.of("x", "y", "f")) {
        Number v = values.get(c);
        boolean isMissing = missing(v);
        nonFinite += v != null && isMissing ? 1 : 0;
        double mean = stats.get(c)[0];
        double std = stats.get(c)[1];
        double imputed = isMissing ? mean : v.doubleValue();
        String at = c + " of row " + i + " (" + v + ")";
        assertEquals(isMissing, r.<Boolean>getAs(c + "_isnull"), at);
        assertEquals(imputed, r.<Double>getAs(c + "_imputed"), 1e-12, at);
        double z = r.<Double>getAs(c + "_std");
        assertTrue(Double.isFinite(z), at + ": std " + z);
        assertEquals((imputed - mean) / std, z, 1e-12, at);
        if (isMissing) {
          assertEquals(0.0, z, 0.0, at);
        }
        if (!c.equals("x")) {
          assertEquals(Math.log1p(imputed), r.<Double>getAs(c + "_log1p"), 1e-12, at);
        }
      }
      seen++;
    }
    assertEquals(NON_FINITE_ROWS, seen);
    String rendered = summary.render(rows, 2);
    assertTrue(
        rendered.contains(
            "non-finite     " + nonFinite + " values in x, y, f treated as missing\n"),
        rendered);
  }

  @Test
  void theStatisticsLeaveNonFiniteValuesOut(@TempDir Path dir) {
    Dataset<Row> in = nonFiniteInput(dir);
    FeaturePlan plan = SparkFirstPass.plan(in, 3);
    for (FeaturePlan.Column c : plan.columns) {
      double[] expected = finiteStats(in, c.name);
      assertEquals(expected[0], c.mean, 1e-12, c.name);
      assertEquals(expected[1], c.std(), 1e-12, c.name);
      assertTrue(c.nullable, c.name);
      assertTrue(c.floating, c.name);
      assertEquals(!c.name.equals("x"), c.nonNegative, c.name);
    }
    long expectedNonFinite = 0;
    for (int i = 0; i < NON_FINITE_ROWS; i++) {
      for (Number v : new Number[] {x(i), y(i), f(i)}) {
        expectedNonFinite += v != null && missing(v) ? 1 : 0;
      }
    }
    assertEquals(expectedNonFinite, plan.nonFiniteCount());
    assertEquals("x, y, f", plan.nonFiniteColumns());
  }

  @Test
  void noNonFiniteLineWhenThereAreNone(@TempDir Path dir) {
    String input = dir.resolve("in").toString();
    spark.range(10).selectExpr("cast(id as double) as d").write().parquet(input);
    JobSummary summary = new JobSummary("features");
    long rows = TestFeaturesJob.run(spark, input, dir.resolve("out").toString(), 3, summary);
    assertFalse(summary.render(rows, 2).contains("non-finite"));
  }

  private static final int NTZ_ROWS = 80;

  /** Row {@code i}'s wall-clock time, before and after 1970; null every sixth row. */
  private static java.time.LocalDateTime ntz(int i) {
    return i % 6 == 5
        ? null
        : java.time.LocalDateTime.of(1969, 12, 31, 23, 30, 0, 123_000)
            .plusMinutes(997L * i * i - 40_000L)
            .plusNanos(1000L * i);
  }

  /** An int id (never null) and a timestamp_ntz column. */
  private static Dataset<Row> ntzInput() {
    StructType schema =
        new StructType().add("id", DataTypes.IntegerType).add("t", DataTypes.TimestampNTZType);
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < NTZ_ROWS; i++) {
      rows.add(RowFactory.create(i, ntz(i)));
    }
    return spark.createDataFrame(rows, schema).repartition(3);
  }

  /** Runs {@code body} with the session's time zone set to one that is not UTC. */
  private static void outsideUtc(Runnable body) {
    String zone = spark.conf().get("spark.sql.session.timeZone");
    spark.conf().set("spark.sql.session.timeZone", "America/Los_Angeles");
    try {
      body.run();
    } finally {
      spark.conf().set("spark.sql.session.timeZone", zone);
    }
  }

  /**
   * A timestamp_ntz column with nulls, before and after 1970: its hour, day of week and month are
   * Spark SQL's hour, dayofweek and month, the wall clock's whatever the session's zone; a null's
   * imputed value is the mean wall-clock microsecond, rounded. On the CPU path without a GPU.
   */
  @Test
  void timestampNtzFeaturesAreSparkSqlsWallClockParts() {
    outsideUtc(
        () -> {
          long sum = 0;
          int present = 0;
          java.time.LocalDateTime epoch = java.time.LocalDateTime.of(1970, 1, 1, 0, 0);
          for (int i = 0; i < NTZ_ROWS; i++) {
            if (ntz(i) != null) {
              sum += ChronoUnit.MICROS.between(epoch, ntz(i));
              present++;
            }
          }
          java.time.LocalDateTime mean =
              epoch.plus(Math.round((double) sum / present), ChronoUnit.MICROS);
          Dataset<Row> in = ntzInput();
          PipelineReport report = PipelineReport.create(spark);
          Dataset<Row> out = features(in, 2, report);
          assertEquals(DataTypes.TimestampNTZType, out.schema().apply("t_imputed").dataType());
          Map<Integer, Row> expected = new HashMap<>();
          for (Row r :
              in.selectExpr("id", "hour(t)", "dayofweek(t)", "month(t)", "t").collectAsList()) {
            expected.put(r.getInt(0), r);
          }
          List<Row> got = out.collectAsList();
          assertEquals(NTZ_ROWS, got.size());
          for (Row r : got) {
            // id is never null: its imputed value is itself.
            int id = (int) Math.round(r.<Double>getAs("id_imputed"));
            Row e = expected.get(id);
            assertNotNull(e, "row " + id);
            boolean isNull = e.isNullAt(4);
            assertEquals(isNull, r.<Boolean>getAs("t_isnull"), "row " + id);
            assertEquals(e.get(1), r.getAs("t_hour"), "hour of row " + id);
            assertEquals(e.get(2), r.getAs("t_dow"), "day of week of row " + id);
            assertEquals(e.get(3), r.getAs("t_month"), "month of row " + id);
            assertEquals(isNull ? mean : e.get(4), r.getAs("t_imputed"), "imputed of row " + id);
          }
          assertTrue(report.gpuTasks() + report.cpuTasks() > 0, "no task ran");
        });
  }

  /**
   * The GPU kernel on a timestamp_ntz column gives what the CPU implementation gives (which the
   * test above holds to Spark SQL). Fails, rather than skips, where the executor has no GPU.
   */
  @Test
  @Tag("gpu")
  void timestampNtzFeaturesOnTheGpuMatchTheCpuImplementation() {
    assertTrue(GpuStatus.current().gpu(), "no GPU: " + GpuStatus.current().reason());
    outsideUtc(
        () -> {
          Dataset<Row> in = ntzInput();
          FeaturePlan plan = SparkFirstPass.plan(in, 2);
          Map<Integer, Row> expected = new HashMap<>();
          List<List<String>> kinds = CpuFeatures.kindFeatures(plan);
          for (Row r : in.collectAsList()) {
            expected.put(r.getInt(0), CpuFeatures.row(plan, kinds, r));
          }
          PipelineReport report = PipelineReport.create(spark);
          List<Row> gpu = FeatureTransform.features(in, plan, report).collectAsList();
          assertTrue(report.gpuTasks() > 0, "no task ran on the GPU");
          assertEquals(0, report.cpuTasks(), "tasks ran on the CPU");
          assertEquals(NTZ_ROWS, gpu.size());
          String[] names = plan.outputSchema().fieldNames();
          for (Row r : gpu) {
            int id = (int) Math.round(r.<Double>getAs("id_imputed"));
            Row cpu = expected.get(id);
            assertNotNull(cpu, "row " + id);
            for (int k = 0; k < names.length; k++) {
              String at = names[k] + " of row " + id;
              Object want = cpu.get(k);
              Object got = r.getAs(names[k]);
              if (want instanceof Double w) {
                assertEquals(w, (Double) got, 1e-12 * Math.max(1, Math.abs(w)), at);
              } else {
                assertEquals(want, got, at);
              }
            }
          }
        });
  }

  /**
   * The GPU kernel on NaN and infinities gives what the CPU implementation gives. Fails, rather
   * than skips, where the executor has no GPU: run it on a GPU machine.
   */
  @Test
  @Tag("gpu")
  void nonFiniteValuesOnTheGpuMatchTheCpuImplementation(@TempDir Path dir) {
    assertTrue(GpuStatus.current().gpu(), "no GPU: " + GpuStatus.current().reason());
    Dataset<Row> in = nonFiniteInput(dir);
    FeaturePlan plan = SparkFirstPass.plan(in, 3);
    // The CPU implementation's rows, computed here from the same plan, by the row's blob.
    Map<Integer, Row> expected = new HashMap<>();
    List<List<String>> kinds = CpuFeatures.kindFeatures(plan);
    for (Row r : in.collectAsList()) {
      Row kernelIn = RowFactory.create(r.get(0), r.get(1), r.get(2));
      expected.put((int) r.<byte[]>getAs("blob")[0], CpuFeatures.row(plan, kinds, kernelIn));
    }
    PipelineReport report = PipelineReport.create(spark);
    List<Row> gpu = FeatureTransform.features(in, plan, report).collectAsList();
    assertTrue(report.gpuTasks() > 0, "no task ran on the GPU");
    assertEquals(0, report.cpuTasks(), "tasks ran on the CPU");
    assertEquals(NON_FINITE_ROWS, gpu.size());
    String[] names = plan.outputSchema().fieldNames();
    for (Row r : gpu) {
      int i = r.<byte[]>getAs("blob")[0];
      Row cpu = expected.get(i);
      assertNotNull(cpu, "row " + i);
      for (int k = 0; k < names.length; k++) { // the features; the blob passes through
        String at = names[k] + " of row " + i;
        Object want = cpu.get(k);
        Object got = r.getAs(names[k]);
        if (want instanceof Double w) {
          double g = (Double) got;
          assertTrue(Double.isFinite(g), at + ": " + g);
          assertEquals(w, g, 1e-12 * Math.max(1, Math.abs(w)), at);
        } else {
          assertEquals(want, got, at);
        }
      }
      assertEquals(missing(x(i)), r.<Boolean>getAs("x_isnull"), "x of row " + i);
      assertEquals(missing(y(i)), r.<Boolean>getAs("y_isnull"), "y of row " + i);
      assertEquals(missing(f(i)), r.<Boolean>getAs("f_isnull"), "f of row " + i);
    }
  }

  // ---- names -----------------------------------------------------------------------------------

  @Test
  void binaryAndBooleanColumnsPassThroughBesideTheirRowsFeatures() {
    StructType schema =
        new StructType()
            .add("v", DataTypes.LongType, false)
            .add("blob", DataTypes.BinaryType)
            .add("FLAG", DataTypes.BooleanType);
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      rows.add(RowFactory.create((long) i, new byte[] {(byte) i, (byte) (100 + i)}, i % 3 == 0));
    }
    Dataset<Row> in = spark.createDataFrame(rows, schema).repartition(3);
    Dataset<Row> out = features(in, 2, null);
    assertEquals(List.of("v_std", "v_log1p", "blob", "FLAG"), List.of(out.columns()));
    double mean = in.selectExpr("avg(v)").first().getDouble(0);
    double std = in.selectExpr("stddev_samp(v)").first().getDouble(0);
    // Each row beside its own features, in the input's order.
    List<Row> want = in.collectAsList();
    List<Row> got = out.collectAsList();
    assertEquals(40, got.size());
    for (int k = 0; k < got.size(); k++) {
      Row r = got.get(k);
      int i = (int) want.get(k).getLong(0);
      assertArrayEquals(new byte[] {(byte) i, (byte) (100 + i)}, (byte[]) r.get(2), "row " + i);
      assertEquals(i % 3 == 0, r.getBoolean(3), "row " + i);
      assertEquals((i - mean) / std, r.<Double>getAs("v_std"), 1e-12, "row " + i);
    }
  }

  @Test
  void featuresNamedLikeAnInputColumnTakeASuffix() {
    StructType schema =
        new StructType()
            .add("a", DataTypes.DoubleType)
            .add("a_std", DataTypes.LongType, false)
            .add("A_ISNULL", DataTypes.BinaryType) // passes through under its own name
            .add("a_std_2", DataTypes.StringType, false)
            .add("count", DataTypes.StringType, false); // the first pass counts values too
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      rows.add(
          RowFactory.create(
              i % 5 == 0 ? null : i * 0.5,
              (long) i * i,
              new byte[] {(byte) i},
              "s" + (i % 3),
              i % 4 == 0 ? "x" : "c" + (i % 2)));
    }
    Dataset<Row> in = spark.createDataFrame(rows, schema).repartition(2);
    Dataset<Row> out = features(in, 2, null);
    assertEquals(
        List.of(
            "a_std_3", // a_std and a_std_2 are inputs
            "a_log1p",
            "a_isnull_2", // A_ISNULL is an input, ignoring case
            "a_imputed",
            "a_std_std",
            "a_std_log1p",
            "a_std_2_idx",
            "count_idx",
            "A_ISNULL"),
        List.of(out.columns()));
    double mean = in.selectExpr("avg(a)").first().getDouble(0);
    double std = in.selectExpr("stddev_samp(a)").first().getDouble(0);
    double meanSq = in.selectExpr("avg(a_std)").first().getDouble(0);
    double stdSq = in.selectExpr("stddev_samp(a_std)").first().getDouble(0);
    for (Row r : out.collectAsList()) {
      int i = r.<byte[]>getAs("A_ISNULL")[0];
      double a = i % 5 == 0 ? mean : i * 0.5;
      assertEquals((a - mean) / std, r.<Double>getAs("a_std_3"), 1e-12, "row " + i);
      assertEquals(i % 5 == 0, r.<Boolean>getAs("a_isnull_2"), "row " + i);
      assertEquals(a, r.<Double>getAs("a_imputed"), 1e-12, "row " + i);
      assertEquals((i * i - meanSq) / stdSq, r.<Double>getAs("a_std_std"), 1e-12, "row " + i);
      // count: c1 has 20 rows, c0 and x 10 each: the vocabulary of 2 is c1, then c0 (by value).
      int count = i % 4 == 0 ? 2 : i % 2 == 1 ? 0 : 1;
      assertEquals(count, r.<Integer>getAs("count_idx"), "row " + i);
    }
  }

  @Test
  void aParquetInputWithNamesThatDifferOnlyInCase(@TempDir Path dir) {
    String input = dir.resolve("in").toString();
    spark.conf().set("spark.sql.caseSensitive", "true");
    try {
      spark.sql("select 1L as A, 2L as a").write().parquet(input);
    } finally {
      spark.conf().set("spark.sql.caseSensitive", "false");
    }
    String output = dir.resolve("out").toString();
    UsageException e =
        assertThrows(
            UsageException.class,
            () -> TestFeaturesJob.run(spark, input, output, 2, new JobSummary("features")));
    assertTrue(e.getMessage().contains("`a`"), e.getMessage());
    assertFalse(Files.exists(Path.of(output)));
  }

  @Test
  void namesThatDifferOnlyInCase() {
    StructType schema =
        new StructType().add("A", DataTypes.LongType, false).add("a", DataTypes.LongType, false);
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      rows.add(RowFactory.create((long) i, (long) i * i));
    }
    // Spark resolves names ignoring case by default: the two cannot be told apart.
    FeatureInputException e =
        assertThrows(
            FeatureInputException.class,
            () -> features(spark.createDataFrame(rows, schema), 2, null));
    assertTrue(e.getMessage().contains("'A' and 'a'"), e.getMessage());

    spark.conf().set("spark.sql.caseSensitive", "true");
    try {
      Dataset<Row> out = features(spark.createDataFrame(rows, schema), 2, null);
      // The output is still readable ignoring case: a's features take a suffix.
      assertEquals(List.of("A_std", "A_log1p", "a_std_2", "a_log1p_2"), List.of(out.columns()));
      double mean = 19 * 20 * 39 / 6.0 / 20;
      for (Row r : out.collectAsList()) {
        double stdA = r.getDouble(0);
        double sq = r.getDouble(3); // ln(1 + i * i)
        long i = Math.round(Math.sqrt(Math.expm1(sq)));
        assertEquals((i - 9.5) / Math.sqrt(35.0), stdA, 1e-12, "row " + i);
        assertTrue(r.getDouble(2) < 0 == i * i < mean, "row " + i);
      }
    } finally {
      spark.conf().set("spark.sql.caseSensitive", "false");
    }
  }

  /** Both passes on Spark's first pass, with the schema's nullability: the job's internals. */
  private static Dataset<Row> features(Dataset<Row> in, int vocabulary, PipelineReport report) {
    return FeatureTransform.features(in, SparkFirstPass.plan(in, vocabulary), report);
  }
}
