package dev.overlap.jobs.etl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.PipelineReport;
import dev.overlap.jobs.TestSessions;
import dev.overlap.jobs.cli.JobSummary;
import dev.overlap.jobs.cli.UsageException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The etl job on lineitem tables from other TPC-H generators (money as double, float, decimals of
 * other precision and scale, integer quantities, nulls, upper-case names), on the CPU path: its Q1
 * and Q6 equal Spark SQL's in type and value. And input it cannot use is refused before any work,
 * with a message that names the column, its type and what etl accepts.
 */
public class EtlInputsTest {
  @TempDir static Path tmp;
  static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = TestSessions.withPlugin("local[2]", "spark.sql.shuffle.partitions", "4");
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  static Stream<EtlInputs.Kinds> cases() {
    return EtlInputs.cases().stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void sameAsSparkSql(EtlInputs.Kinds k) {
    Dataset<Row> lineitem = EtlInputs.write(spark, tmp, k, 2000, k.name().hashCode());
    PipelineReport[] r = EtlInputs.check(spark, lineitem, k.name());
    for (PipelineReport p : r) {
      assertTrue(p.cpuTasks() > 0, "the CPU path ran");
    }
  }

  @Test
  void runWritesBothQueries() throws Exception {
    Dataset<Row> lineitem =
        EtlInputs.write(
            spark,
            tmp,
            EtlInputs.kinds(
                "run_decimal_15_4",
                EtlInputs.dec(15, 4),
                EtlInputs.dec(15, 4),
                EtlInputs.dec(15, 4),
                EtlInputs.dec(15, 4)),
            500,
            7);
    lineitem.createOrReplaceTempView("run_input");
    String out = tmp.resolve("run_out").toString();
    long rows =
        TestEtl.run(spark, tmp.resolve("run_decimal_15_4").toString(), out, new JobSummary("etl"));
    Dataset<Row> q1 = spark.read().parquet(out + "/q1");
    EtlInputs.assertSame(
        spark.sql(String.format(EtlInputs.Q1, "run_input")),
        q1.orderBy("l_returnflag", "l_linestatus"),
        "Q1");
    EtlInputs.assertSame(
        spark.sql(String.format(EtlInputs.Q6, "run_input")),
        spark.read().parquet(out + "/q6"),
        "Q6");
    assertEquals(q1.count() + 1, rows);
  }

  // ---- refusals -------------------------------------------------------------------------------

  private static final String MONEY = "decimal, double, float, int or long";

  /** A one-row table with the standard columns, {@code name} replaced by {@code type}. */
  private static Dataset<Row> withColumn(String name, DataType type, Object value) {
    StructType s = new StructType();
    Object[] v = new Object[7];
    String[] cols = {
      "l_quantity",
      "l_extendedprice",
      "l_discount",
      "l_tax",
      "l_returnflag",
      "l_linestatus",
      "l_shipdate"
    };
    Object[] normal = {
      new java.math.BigDecimal("1.00"),
      new java.math.BigDecimal("2.00"),
      new java.math.BigDecimal("0.05"),
      new java.math.BigDecimal("0.01"),
      "A",
      "F",
      java.sql.Date.valueOf("1994-06-01")
    };
    for (int i = 0; i < cols.length; i++) {
      DataType t =
          i < 4
              ? DataTypes.createDecimalType(12, 2)
              : i < 6 ? DataTypes.StringType : DataTypes.DateType;
      if (cols[i].equals(name)) {
        s = s.add(name, type);
        v[i] = value;
      } else {
        s = s.add(cols[i], t);
        v[i] = normal[i];
      }
    }
    return spark.createDataFrame(List.of(RowFactory.create(v)), s);
  }

  private static String refusal(Dataset<Row> lineitem) {
    return assertThrows(UsageException.class, () -> TestEtl.q1(lineitem, null)).getMessage();
  }

  @Test
  void refusesAShipDateThatIsAString() {
    assertEquals(
        "input column 'l_shipdate' is string; etl accepts date for it",
        refusal(withColumn("l_shipdate", DataTypes.StringType, "1994-06-01")));
  }

  @Test
  void refusesAReturnFlagThatIsAnInt() {
    assertEquals(
        "input column 'l_returnflag' is int; etl accepts string for it",
        refusal(withColumn("l_returnflag", DataTypes.IntegerType, 1)));
  }

  @Test
  void refusesMoneyThatIsBooleanOrBinary() {
    assertEquals(
        "input column 'l_discount' is boolean; etl accepts " + MONEY + " for it",
        refusal(withColumn("l_discount", DataTypes.BooleanType, true)));
    assertEquals(
        "input column 'l_tax' is binary; etl accepts " + MONEY + " for it",
        refusal(withColumn("l_tax", DataTypes.BinaryType, new byte[] {1})));
    assertEquals(
        "input column 'l_quantity' is string; etl accepts " + MONEY + " for it",
        refusal(withColumn("l_quantity", DataTypes.StringType, "1")));
  }

  @Test
  void refusesAMissingColumn() {
    Dataset<Row> lineitem = withColumn("l_tax", DataTypes.IntegerType, 0).drop("l_quantity");
    String want =
        "input has no column 'l_quantity' (etl needs l_quantity, l_extendedprice, l_discount,"
            + " l_tax, l_returnflag, l_linestatus, l_shipdate); is --input a TPC-H lineitem table?";
    assertEquals(want, refusal(lineitem));
    assertEquals(
        want, assertThrows(UsageException.class, () -> TestEtl.q6(lineitem, null)).getMessage());
  }

  @Test
  void namesAnUpperCaseColumnAsTheInputDoes() {
    Dataset<Row> lineitem =
        withColumn("l_discount", DataTypes.BooleanType, true)
            .withColumnRenamed("l_discount", "L_DISCOUNT");
    assertEquals(
        "input column 'L_DISCOUNT' is boolean; etl accepts " + MONEY + " for it",
        refusal(lineitem));
  }

  @Test
  void runRefusesBeforeWritingAnything() throws Exception {
    String in = tmp.resolve("bad_input").toString();
    withColumn("l_shipdate", DataTypes.StringType, "1994-06-01").write().parquet(in);
    Path out = tmp.resolve("bad_out");
    UsageException e =
        assertThrows(
            UsageException.class,
            () -> TestEtl.run(spark, in, out.toString(), new JobSummary("etl")));
    assertEquals("input column 'l_shipdate' is string; etl accepts date for it", e.getMessage());
    assertFalse(Files.exists(out), "nothing written");
  }
}
