package dev.overlap.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.jobs.etl.EtlInputs;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Inputs people have that TPC-H's own generator does not write, run through the real {@code
 * ./spark-submit.sh}: etl on a lineitem table whose money is double, with nulls, gives Spark SQL's
 * Q1 and Q6; features on a double column with NaN and infinities, beside a binary column passed
 * through, gives finite features and counts what it set aside.
 */
public class UnusualInputsIT {
  @TempDir static Path tmp;
  static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = TestTables.session();
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  @Test
  void etlOnDoublesDecimalsOfOtherScalesAndNulls() throws Exception {
    for (EtlInputs.Kinds k : EtlInputs.cases()) {
      // Every kind runs in process (EtlInputsTest and EtlEnginesTest), TPC-H's decimal(12,2) with
      // nulls and decimal(15,4) among them; through the script, money as doubles, which TPC-H's
      // generator does not write.
      if (!k.name().equals("doubles")) {
        continue;
      }
      Dataset<Row> lineitem = EtlInputs.write(spark, tmp, k, 4000, 7);
      Path in = tmp.resolve(k.name()); // where EtlInputs.write put it
      Shell.Result r =
          Shell.submit(tmp, "etl", "--input", in.toString(), "--output", "etl-" + k.name());
      assertEquals(0, r.exitCode(), k.name() + ":\n" + r.output());
      String view = "li_" + k.name();
      lineitem.createOrReplaceTempView(view);
      EtlInputs.assertSame(
          spark.sql(String.format(Locale.ROOT, EtlInputs.Q1, view)),
          spark
              .read()
              .parquet(tmp.resolve("etl-" + k.name() + "/q1").toString())
              .orderBy("l_returnflag", "l_linestatus"),
          k.name() + " Q1");
      EtlInputs.assertSame(
          spark.sql(String.format(Locale.ROOT, EtlInputs.Q6, view)),
          spark.read().parquet(tmp.resolve("etl-" + k.name() + "/q6").toString()),
          k.name() + " Q6");
    }
  }

  @Test
  void featuresOnNonFiniteValuesBesideAColumnNamedLikeTheRowId() throws Exception {
    // A binary column passes through the job beside its row's features; named as the job's row
    // id once was, it is a column like any other.
    StructType schema =
        new StructType()
            .add("x", DataTypes.DoubleType, false)
            .add("__overlap_row_id", DataTypes.BinaryType);
    List<Row> rows = new ArrayList<>();
    double[] special = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY};
    for (int i = 0; i < 300; i++) {
      double x = i % 50 == 7 ? special[(i / 50) % 3] : i;
      rows.add(RowFactory.create(x, new byte[] {(byte) (i >> 8), (byte) i}));
    }
    Path in = tmp.resolve("nonfinite");
    spark.createDataFrame(rows, schema).coalesce(2).write().parquet(in.toString());
    Shell.Result r =
        Shell.submit(tmp, "features", "--input", in.toString(), "--output", "features-nonfinite");
    assertEquals(0, r.exitCode(), r.output());
    assertTrue(
        r.output().matches("(?s).*\\nnon-finite +6 values in x treated as missing.*"), r.output());
    Dataset<Row> out = spark.read().parquet(tmp.resolve("features-nonfinite").toString());
    assertEquals(0, out.where("isnan(x_std) or abs(x_std) = double('inf')").count());
    assertEquals(6, out.where("x_isnull").count());
    // Each row keeps its own input bytes: x, where finite, is the row number they encode.
    List<Row> got = out.select("x_imputed", "x_isnull", "__overlap_row_id").collectAsList();
    assertEquals(300, got.size());
    for (Row row : got) {
      byte[] id = (byte[]) row.get(2);
      int i = ((id[0] & 0xff) << 8) | (id[1] & 0xff);
      assertEquals(i % 50 == 7, row.getBoolean(1), row.toString());
      if (i % 50 != 7) {
        assertEquals((double) i, row.getDouble(0), row.toString());
      }
    }
  }
}
