package dev.overlap.features;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.PipelineReport;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.file.Path;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
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
 * The features job's first pass as kernels ({@link FirstPass}) gives Spark's own first pass ({@code
 * SparkFirstPass}), on real Parquet files read in several partitions: means and deviations within
 * rounding, everything else exactly, vocabularies whether the bound proves them or Spark is asked.
 * Without a GPU the kernels' CPU implementations run; the test tagged {@code gpu} runs the kernels.
 */
class FirstPassTest {
  static final int ROWS = 3000;
  static SparkSession spark;
  @TempDir static Path dir;
  static Dataset<Row> input;

  @BeforeAll
  static void start() {
    // Several splits per file: partial aggregates of many batches are merged.
    spark = TestSessions.withPlugin("local[2]", "spark.sql.files.maxPartitionBytes", "8192");
    StructType schema =
        new StructType()
            .add("id", DataTypes.LongType)
            .add("x", DataTypes.DoubleType)
            .add("price", DataTypes.createDecimalType(12, 2))
            .add("flat", DataTypes.IntegerType)
            .add("neg", DataTypes.IntegerType)
            .add("day", DataTypes.DateType)
            .add("seen", DataTypes.TimestampType)
            .add("recent", DataTypes.TimestampType)
            .add("wall", DataTypes.TimestampNTZType)
            .add("small", DataTypes.StringType)
            .add("skewed", DataTypes.StringType)
            .add("even", DataTypes.StringType)
            .add("none", DataTypes.StringType)
            .add("blob", DataTypes.BinaryType);
    String[] small = {"b", "a", "c", "a", "b", "d"}; // a and b tie
    double[] odd = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY};
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < ROWS; i++) {
      rows.add(
          RowFactory.create(
              i % 10 == 9 ? null : (long) i * 7919 % 100_003,
              i % 11 == 3 ? null : i % 13 == 5 ? odd[i % 3] : Math.sin(i) * 1e3,
              new BigDecimal(BigInteger.valueOf(i * 37L % 10_000), 2),
              7,
              i % 17 - 8,
              i % 4 == 1 ? null : java.sql.Date.valueOf(LocalDate.of(1965, 1, 1).plusDays(i * 7L)),
              i % 5 == 4 ? null : Timestamp.from(Instant.EPOCH.plusSeconds(37L * i)),
              recent(i),
              i % 6 == 2 ? null : LocalDateTime.of(1970, 1, 1, 0, 0).plusSeconds(-1000L + 53L * i),
              i % 7 == 6 ? null : small[i % small.length],
              i % 5 == 0 ? "hot" : i % 7 == 1 ? "warm" : "cold-" + i,
              "v" + (i * 31 % 1000), // each value 3 times, far apart
              null,
              new byte[] {(byte) i}));
    }
    spark
        .createDataFrame(rows, schema)
        .repartition(6)
        .write()
        .parquet(dir.resolve("in").toString());
    input = spark.read().parquet(dir.resolve("in").toString());
  }

  /** A timestamp of 2024, whose microseconds summed overflow a double's exact range. */
  static Timestamp recent(int i) {
    return i % 8 == 3
        ? null
        : Timestamp.from(Instant.parse("2024-03-03T21:15:00Z").plusSeconds(86_413L * i + i % 3));
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  @Test
  void kernelsGiveSparksFirstPass() {
    PipelineReport report = PipelineReport.create(spark);
    List<String> onSpark = new ArrayList<>();
    FeaturePlan got = FirstPass.kernels(input, 3, report, report, onSpark);
    assertSame(SparkFirstPass.plan(input, 3), got);
    assertEquals(List.of(), onSpark);
    assertTrue(report.gpuTasks() + report.cpuTasks() > 1, "the kernels did not run");
  }

  /**
   * With three values reported per batch, "skewed"'s two most frequent values are proven by the
   * bound after exact counting; "even" (every value three times) cannot be, and Spark gives it.
   */
  @Test
  void aBoundThatProvesAndOneThatDoesNot() {
    PipelineReport report = PipelineReport.create(spark);
    List<String> onSpark = new ArrayList<>();
    FeaturePlan got = FirstPass.kernels(input, 2, 3, report, report, onSpark);
    assertSame(SparkFirstPass.plan(input, 2), got);
    assertEquals(List.of("even"), onSpark);
    assertEquals(List.of("hot", "warm"), column(got, "skewed").vocabulary);
  }

  @Test
  void timestampMeansAreExact() {
    BigInteger sum = BigInteger.ZERO;
    long n = 0;
    for (int i = 0; i < ROWS; i++) {
      if (recent(i) != null) {
        sum =
            sum.add(
                BigInteger.valueOf(
                    ChronoUnit.MICROS.between(Instant.EPOCH, recent(i).toInstant())));
        n++;
      }
    }
    // Math.round(sum / n): floor(sum / n + 1/2)
    long expected =
        sum.shiftLeft(1)
            .add(BigInteger.valueOf(n))
            .divide(BigInteger.valueOf(2 * n))
            .longValueExact();
    FeaturePlan got = FirstPass.kernels(input, 3, null, null, new ArrayList<>());
    assertEquals(expected, column(got, "recent").meanEpoch);
  }

  @Test
  void theBoundProvesOnlyWhatItCan() {
    Map<String, Long> counts = Map.of("a", 10L, "b", 7L, "c", 7L, "d", 2L);
    assertEquals(List.of("a", "b"), FirstPass.proven(counts, 6, 2));
    assertNull(FirstPass.proven(counts, 7, 2), "a value left out could tie with b and precede it");
    assertNull(FirstPass.proven(counts, 1, 5), "fewer values counted than wanted");
    assertEquals(List.of("a", "b", "c", "d"), FirstPass.proven(counts, 0, 5));
    // UTF-8 byte order, as Spark's: U+FF21 (3 bytes) before U+1F600 (4 bytes), unlike UTF-16.
    Map<String, Long> ties = Map.of("\uD83D\uDE00", 1L, "\uFF21", 1L);
    assertEquals(List.of("\uFF21", "\uD83D\uDE00"), FirstPass.proven(ties, 0, 2));
  }

  /** The kernels on the GPU, which must have run there. Fails, rather than skips, without one. */
  @Test
  @Tag("gpu")
  void kernelsOnTheGpuGiveSparksFirstPass() {
    assertTrue(GpuStatus.current().gpu(), "no GPU: " + GpuStatus.current().reason());
    PipelineReport report = PipelineReport.create(spark);
    List<String> onSpark = new ArrayList<>();
    FeaturePlan got = FirstPass.kernels(input, 2, 3, report, report, onSpark);
    assertTrue(report.gpuTasks() > 0, "no task ran on the GPU");
    assertEquals(0, report.cpuTasks(), "tasks ran on the CPU");
    assertSame(SparkFirstPass.plan(input, 2), got);
    assertEquals(List.of("even"), onSpark);
    FeaturePlan cpuOfKernels = FirstPass.kernels(input, 3, null, null, new ArrayList<>());
    assertSame(SparkFirstPass.plan(input, 3), cpuOfKernels);
  }

  private static FeaturePlan.Column column(FeaturePlan p, String name) {
    return p.columns.stream().filter(c -> c.name.equals(name)).findFirst().orElseThrow();
  }

  private static void assertSame(FeaturePlan spark, FeaturePlan got) {
    assertEquals(spark.unsupported, got.unsupported);
    assertEquals(spark.columns.size(), got.columns.size());
    for (int i = 0; i < spark.columns.size(); i++) {
      FeaturePlan.Column e = spark.columns.get(i);
      FeaturePlan.Column g = got.columns.get(i);
      String what = e.name;
      assertEquals(e.name, g.name);
      assertEquals(e.kind, g.kind, what);
      assertEquals(e.mean, g.mean, 1e-12 * Math.max(1, Math.abs(e.mean)), what + " mean");
      assertEquals(e.std(), g.std(), 1e-12 * Math.max(1, Math.abs(e.std())), what + " std");
      assertEquals(e.nonNegative, g.nonNegative, what + " non-negative");
      assertEquals(e.nonFinite, g.nonFinite, what + " non-finite");
      if (!e.name.equals("recent")) { // Spark's double sum of 2024's microseconds is not exact
        assertEquals(e.meanEpoch, g.meanEpoch, what + " mean epoch");
      }
      assertEquals(e.vocabulary, g.vocabulary, what + " vocabulary");
      assertEquals(e.mode, g.mode, what + " mode");
    }
    assertEquals(0.0, spark.columns.get(3).std(), "flat");
    assertEquals(0.0, got.columns.get(3).std(), "flat: a constant column's deviation is exactly 0");
  }
}
