package dev.overlap.features;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.jobs.TestSessions;
import dev.overlap.jobs.cli.JobSummary;
import dev.overlap.jobs.features.TestFeaturesJob;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The features job at the edges of its types, on real Parquet files: doubles near ±1e308 and near
 * 1e-300, whose squares a double cannot hold, standardized as exact arithmetic does; dates and
 * timestamps before the Gregorian reform of 1582, split as Spark SQL splits them (the proleptic
 * Gregorian calendar). Without a GPU the CPU implementation runs; the tests tagged {@code gpu} run
 * the kernels and fail, rather than skip, without one.
 */
class FeatureEdgeValuesTest {
  static final int ROWS = 120;
  static final MathContext MC = new MathContext(60);
  static SparkSession spark;
  @TempDir static Path dir;
  static Dataset<Row> magnitudes;
  static Dataset<Row> times;

  @BeforeAll
  static void start() {
    spark = TestSessions.withPlugin("local[2]");
    StructType schema =
        new StructType()
            .add("id", DataTypes.IntegerType)
            .add("huge", DataTypes.DoubleType)
            .add("tiny", DataTypes.DoubleType)
            .add("plain", DataTypes.DoubleType);
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < ROWS; i++) {
      rows.add(RowFactory.create(i, huge(i), tiny(i), value("plain", i)));
    }
    String m = dir.resolve("magnitudes").toString();
    spark.createDataFrame(rows, schema).repartition(3).write().parquet(m);
    magnitudes = spark.read().parquet(m);
    String t = dir.resolve("times").toString();
    spark
        .sql(
            "select id, timestamp(s) as t, to_timestamp_ntz(s) as ntz, to_date(s) as d from values"
                + " (0, '0001-01-01 00:00:00'), (1, '1582-10-04 23:59:59'),"
                + " (2, '1582-10-15 00:00:00'), (3, '1000-03-01 13:30:00'),"
                + " (4, '0300-02-28 23:59:59.999999'), (5, '1969-12-31 23:59:59.999999'),"
                + " (6, null), (7, '2024-02-29 12:00:00'), (8, '1200-07-14 06:00:00')"
                + " as v(id, s)")
        .repartition(2)
        .write()
        .parquet(t);
    times = spark.read().parquet(t);
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  /** Values up to ±1.7e308 of both signs; null every ninth row. */
  private static Double huge(int i) {
    if (i % 9 == 8) {
      return null;
    }
    return i == 1 ? 1.7e308 : i == 2 ? -1.7e308 : ((i % 17) - 8) * 1.1e307 * (1 + i * 1e-3);
  }

  /** Values near 1e-300 of both signs, whose squares underflow to 0. */
  private static double tiny(int i) {
    return ((i % 13) - 6 + i * 1e-3) * 1e-300;
  }

  /**
   * The id of a features row whose input ids were 0 … n-1, none null: its imputed id where the row
   * has one, else undone from its z-score (mean (n-1)/2, sample deviation sqrt(n(n+1)/12)).
   */
  static int idOf(Row r, int n) {
    if (List.of(r.schema().fieldNames()).contains("id_imputed")) {
      return (int) Math.round(r.<Double>getAs("id_imputed"));
    }
    return (int)
        Math.round(r.<Double>getAs("id_std") * Math.sqrt(n * (n + 1) / 12.0) + (n - 1) / 2.0);
  }

  /** Row {@code i}'s value of column {@code name}. */
  private static Double value(String name, int i) {
    switch (name) {
      case "huge":
        return huge(i);
      case "tiny":
        return tiny(i);
      default:
        return i * 0.5 - 7;
    }
  }

  // ---- magnitudes --------------------------------------------------------------------------

  @Test
  void extremeMagnitudesGiveTheZScoresOfExactArithmetic(@TempDir Path out) {
    String output = out.resolve("features").toString();
    long rows =
        TestFeaturesJob.run(
            spark, dir.resolve("magnitudes").toString(), output, 3, new JobSummary("features"));
    assertEquals(ROWS, rows);
    assertExactZScores(spark.read().parquet(output).collectAsList());
  }

  @Test
  void bothFirstPassesGiveTheExactMeanAndScaledDeviation() {
    assertExactMoments(SparkFirstPass.plan(magnitudes, 3));
    assertExactMoments(FirstPass.kernels(magnitudes, 3, null, null, new ArrayList<>()));
  }

  @Test
  @Tag("gpu")
  void extremeMagnitudesOnTheGpuGiveTheZScoresOfExactArithmetic() {
    assertTrue(GpuStatus.current().gpu(), "no GPU: " + GpuStatus.current().reason());
    PipelineReport first = PipelineReport.create(spark);
    FeaturePlan plan = FirstPass.kernels(magnitudes, 3, first, first, new ArrayList<>());
    assertTrue(first.gpuTasks() > 0, "the first pass ran no task on the GPU");
    assertExactMoments(plan);
    PipelineReport report = PipelineReport.create(spark);
    List<Row> got = FeatureTransform.features(magnitudes, plan, report).collectAsList();
    assertTrue(report.gpuTasks() > 0, "no task ran on the GPU");
    assertEquals(0, report.cpuTasks(), "tasks ran on the CPU");
    assertExactZScores(got);
  }

  private static void assertExactMoments(FeaturePlan plan) {
    for (String name : List.of("huge", "tiny", "plain")) {
      FeaturePlan.Column c = column(plan, name);
      BigDecimal[] exact = exactMoments(name);
      assertEquals(exact[0].doubleValue(), c.mean, 1e-12 * Math.abs(c.mean), name + " mean");
      double std = exact[1].multiply(new BigDecimal(c.scale), MC).doubleValue();
      assertEquals(std, c.scaledStd, 1e-12 * std, name + " scaled deviation");
      assertEquals(name.equals("plain"), c.scale == 1.0, name + "'s scale " + c.scale);
    }
  }

  /** Each row's z-score of every column against exact arithmetic; a null's is 0. */
  private static void assertExactZScores(List<Row> got) {
    assertEquals(ROWS, got.size());
    Map<String, BigDecimal[]> moments = new HashMap<>();
    for (String name : List.of("huge", "tiny", "plain")) {
      moments.put(name, exactMoments(name));
    }
    for (Row r : got) {
      int i = idOf(r, ROWS);
      for (String name : List.of("huge", "tiny", "plain")) {
        Double v = value(name, i);
        BigDecimal[] m = moments.get(name);
        double z =
            v == null ? 0.0 : new BigDecimal(v).subtract(m[0], MC).divide(m[1], MC).doubleValue();
        double g = r.<Double>getAs(name + "_std");
        assertEquals(
            z, g, 1e-12 * Math.max(1, Math.abs(z)), name + " of row " + i + " (" + v + ")");
      }
    }
  }

  /** The exact mean and sample deviation of a column's present values. */
  private static BigDecimal[] exactMoments(String name) {
    List<BigDecimal> xs = new ArrayList<>();
    for (int i = 0; i < ROWS; i++) {
      Double v = value(name, i);
      if (v != null) {
        xs.add(new BigDecimal(v));
      }
    }
    BigDecimal n = BigDecimal.valueOf(xs.size());
    BigDecimal mean = xs.stream().reduce(BigDecimal.ZERO, BigDecimal::add).divide(n, MC);
    BigDecimal squares = BigDecimal.ZERO;
    for (BigDecimal x : xs) {
      squares = squares.add(x.subtract(mean).pow(2), MC);
    }
    return new BigDecimal[] {mean, squares.divide(n.subtract(BigDecimal.ONE), MC).sqrt(MC)};
  }

  // ---- before the Gregorian reform ---------------------------------------------------------

  @Test
  void datesAndTimesBeforeTheReformAreSparkSqlsParts(@TempDir Path out) {
    String output = out.resolve("features").toString();
    TestFeaturesJob.run(
        spark, dir.resolve("times").toString(), output, 3, new JobSummary("features"));
    FeaturePlan plan = SparkFirstPass.plan(times, 3);
    assertSparkSqlsParts(spark.read().parquet(output), plan);
  }

  @Test
  void theFirstPassKernelsGiveTheExactMeanInstantBeforeTheReform() {
    FeaturePlan plan = FirstPass.kernels(times, 3, null, null, new ArrayList<>());
    assertExactMeans(plan);
  }

  @Test
  @Tag("gpu")
  void datesAndTimesBeforeTheReformOnTheGpuAreSparkSqlsParts() {
    assertTrue(GpuStatus.current().gpu(), "no GPU: " + GpuStatus.current().reason());
    PipelineReport first = PipelineReport.create(spark);
    FeaturePlan plan = FirstPass.kernels(times, 3, first, first, new ArrayList<>());
    assertTrue(first.gpuTasks() > 0, "the first pass ran no task on the GPU");
    assertExactMeans(plan);
    PipelineReport report = PipelineReport.create(spark);
    Dataset<Row> got = FeatureTransform.features(times, plan, report);
    got.cache().count();
    assertTrue(report.gpuTasks() > 0, "no task ran on the GPU");
    assertEquals(0, report.cpuTasks(), "tasks ran on the CPU");
    assertSparkSqlsParts(got, plan);
  }

  /**
   * Hour, day of week and month as Spark SQL gives them (zoned timestamps in UTC, the session's
   * zone here); a null's imputed value is the plan's mean, read back as Spark reads it.
   */
  private static void assertSparkSqlsParts(Dataset<Row> features, FeaturePlan plan) {
    Map<Integer, Row> expected = new HashMap<>();
    for (Row r :
        times
            .selectExpr(
                "id",
                "hour(t)",
                "dayofweek(t)",
                "month(t)",
                "hour(ntz)",
                "dayofweek(ntz)",
                "month(ntz)",
                "dayofweek(d)",
                "month(d)")
            .collectAsList()) {
      expected.put(r.getInt(0), r);
    }
    List<Row> got =
        features
            .selectExpr(
                "id_std",
                "t_hour",
                "t_dow",
                "t_month",
                "ntz_hour",
                "ntz_dow",
                "ntz_month",
                "d_dow",
                "d_month",
                "t_isnull",
                "unix_micros(t_imputed)",
                "timestampdiff(MICROSECOND, TIMESTAMP_NTZ'1970-01-01 00:00:00', ntz_imputed)",
                "unix_date(d_imputed)")
            .collectAsList();
    assertEquals(expected.size(), got.size());
    for (Row g : got) {
      Row e = expected.get((int) Math.round(g.getDouble(0) * Math.sqrt(9 * 10 / 12.0) + 4));
      for (int k = 1; k <= 8; k++) {
        assertEquals(e.get(k), g.get(k), "row " + e.getInt(0) + ", " + g.schema().apply(k).name());
      }
      if (g.getBoolean(9)) {
        assertEquals(column(plan, "t").meanEpoch, g.getLong(10), "t's imputed instant");
        assertEquals(column(plan, "ntz").meanEpoch, g.getLong(11), "ntz's imputed wall clock");
        assertEquals(column(plan, "d").meanEpoch, g.getInt(12), "d's imputed day");
      }
    }
  }

  /** The plan's mean day and instants are the exact means of Spark's own day and micros counts. */
  private static void assertExactMeans(FeaturePlan plan) {
    Row sums =
        times
            .selectExpr(
                "count(t)",
                "cast(sum(cast(unix_micros(t) as decimal(38,0))) as string)",
                "cast(sum(cast(unix_date(d) as decimal(38,0))) as string)")
            .first();
    long n = sums.getLong(0);
    assertEquals(roundedMean(new BigInteger(sums.getString(1)), n), column(plan, "t").meanEpoch);
    assertEquals(roundedMean(new BigInteger(sums.getString(1)), n), column(plan, "ntz").meanEpoch);
    assertEquals(roundedMean(new BigInteger(sums.getString(2)), n), column(plan, "d").meanEpoch);
  }

  /** Math.round(sum / n) in exact arithmetic: floor((2 sum + n) / 2n). */
  private static long roundedMean(BigInteger sum, long n) {
    BigInteger[] qr =
        sum.shiftLeft(1).add(BigInteger.valueOf(n)).divideAndRemainder(BigInteger.valueOf(2 * n));
    return (qr[1].signum() < 0 ? qr[0].subtract(BigInteger.ONE) : qr[0]).longValueExact();
  }

  private static FeaturePlan.Column column(FeaturePlan p, String name) {
    return p.columns.stream().filter(c -> c.name.equals(name)).findFirst().orElseThrow();
  }
}
