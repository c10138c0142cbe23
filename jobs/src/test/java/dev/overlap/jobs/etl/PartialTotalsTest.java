package dev.overlap.jobs.etl;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.sum;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.jobs.TestSessions;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The driver's totals of partial rows equal Spark's own {@code groupBy(keys).agg(sum)} ordered by
 * the keys: the same types, the same values, the same order of groups (strings by their UTF-8
 * bytes, nulls first), nulls skipped, an overflowing decimal refused.
 */
public class PartialTotalsTest {
  static SparkSession spark;

  static final StructType PARTIAL =
      new StructType()
          .add("k1", DataTypes.StringType)
          .add("k2", DataTypes.StringType)
          .add("money", DataTypes.createDecimalType(38, 2))
          .add("ratio", DataTypes.DoubleType)
          .add("n", DataTypes.LongType, false);

  @BeforeAll
  static void start() {
    spark = TestSessions.local("local[2]", "spark.sql.shuffle.partitions", "3");
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  /** Keys whose UTF-16 order differs from their UTF-8 order, a null, and plain letters. */
  static final String[] KEYS = {"A", "z", "é", "\uFF21", "\uD83D\uDE00", null};

  static Dataset<Row> partials(int rows, long seed) {
    Random r = new Random(seed);
    List<Row> out = new ArrayList<>();
    for (int i = 0; i < rows; i++) {
      BigDecimal money =
          r.nextInt(5) == 0 ? null : BigDecimal.valueOf(r.nextLong() % 1_000_000_000L, 2);
      Double ratio = r.nextInt(5) == 0 ? null : r.nextDouble() * 100;
      out.add(
          RowFactory.create(
              KEYS[r.nextInt(KEYS.length)],
              KEYS[r.nextInt(3)],
              money,
              ratio,
              (long) r.nextInt(1000)));
    }
    return spark.createDataFrame(out, PARTIAL).repartition(4);
  }

  @Test
  void groupedTotalsAreSparksInSparksOrder() {
    Dataset<Row> p = partials(400, 11);
    Dataset<Row> want =
        p.groupBy("k1", "k2")
            .agg(sum("money").as("money"), sum("ratio").as("ratio"), sum("n").as("n"))
            .orderBy("k1", "k2");
    Dataset<Row> got = PartialTotals.of(p, 2);
    for (int c = 0; c < 5; c++) {
      assertEquals(want.schema().fields()[c].name(), got.schema().fields()[c].name());
      assertEquals(want.schema().fields()[c].dataType(), got.schema().fields()[c].dataType());
    }
    // Spark's sum is nullable; a group's total of a column without nulls never is.
    assertTrue(got.schema().apply("money").nullable());
    assertFalse(got.schema().apply("n").nullable());
    List<Row> w = want.collectAsList();
    List<Row> g = got.collectAsList();
    assertEquals(w.size(), g.size());
    assertTrue(w.size() > 10, "groups: " + w.size());
    for (int i = 0; i < w.size(); i++) {
      assertEquals(w.get(i).get(0), g.get(i).get(0), "row " + i);
      assertEquals(w.get(i).get(1), g.get(i).get(1), "row " + i);
      assertEquals(w.get(i).get(2), g.get(i).get(2), "row " + i + " money");
      assertEquals(w.get(i).get(4), g.get(i).get(4), "row " + i + " n");
      if (w.get(i).isNullAt(3)) {
        assertNull(g.get(i).get(3));
      } else {
        assertEquals(w.get(i).getDouble(3), g.get(i).getDouble(3), 1e-9 * w.get(i).getDouble(3));
      }
    }
  }

  @Test
  void withoutKeysOneRowOfTotalsAndNullsWhereNoValue() {
    Dataset<Row> p = partials(50, 3).drop("k1", "k2");
    Dataset<Row> want = p.agg(sum("money"), sum("ratio"), sum("n"));
    Row w = want.collectAsList().get(0);
    Row g = PartialTotals.of(p, 0).collectAsList().get(0);
    assertEquals(w.get(0), g.get(0));
    assertEquals(w.getDouble(1), g.getDouble(1), 1e-9 * Math.abs(w.getDouble(1)));
    assertEquals(w.get(2), g.get(2));
    Dataset<Row> none = p.where(col("n").lt(0));
    List<Row> empty = PartialTotals.of(none, 0).collectAsList();
    assertEquals(none.agg(sum("money"), sum("ratio"), sum("n")).collectAsList(), empty);
    assertEquals(1, empty.size());
    assertNull(empty.get(0).get(0));
    assertEquals(0, PartialTotals.of(partials(20, 5).where(col("n").lt(0)), 2).count());
  }

  @Test
  void aDecimalTotalBeyondItsTypeIsRefusedAsSparkRefusesIt() {
    BigDecimal big = new BigDecimal("9".repeat(36) + ".00");
    List<Row> rows = List.of(RowFactory.create(big, 1L), RowFactory.create(big, 2L));
    StructType t =
        new StructType()
            .add("money", DataTypes.createDecimalType(38, 2))
            .add("n", DataTypes.LongType);
    Dataset<Row> p = spark.createDataFrame(rows, t);
    assertThrows(Exception.class, () -> p.agg(sum("money")).collectAsList(), "Spark's ANSI sum");
    ArithmeticException e = assertThrows(ArithmeticException.class, () -> PartialTotals.of(p, 0));
    assertTrue(e.getMessage().contains("money"), e.getMessage());
  }
}
