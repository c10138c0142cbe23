package dev.overlap.features;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.PipelineReport;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.ml.feature.Imputer;
import org.apache.spark.ml.feature.ImputerModel;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code imputeStrategy}: a missing number becomes the median or the mode exactly as Spark ML's
 * {@code Imputer} gives it (median with {@code relativeError} 0), kept when saved and loaded, the
 * same on the GPU as on the CPU.
 */
class ImputeStrategyTest {
  static SparkSession spark;
  static Dataset<Row> train;
  static Dataset<Row> test;

  @BeforeAll
  static void start() {
    spark = TestSessions.withPlugin("local[2]");
    train = rows(0, 1001);
    test = rows(2000, 300);
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  /** A double with nulls and NaN (an even count present), an int with nulls and ties. */
  static Dataset<Row> rows(long from, long n) {
    return spark
        .range(from, from + n, 1, 3)
        .selectExpr(
            "CASE WHEN id % 9 = 4 THEN NULL WHEN id % 13 = 1 THEN double('NaN')"
                + " ELSE round(sin(id) * 100, 1) END AS x",
            "CASE WHEN id % 6 = 0 THEN NULL ELSE CAST(id % 7 + id % 5 AS INT) END AS k");
  }

  /** Imputer's answer for {@code strategy}, exactly (relativeError 0), as doubles. */
  static ImputerModel imputer(String strategy) {
    return new Imputer()
        .setInputCols(new String[] {"x", "k"})
        .setOutputCols(new String[] {"x_theirs", "k_theirs"})
        .setStrategy(strategy)
        .setRelativeError(0.0)
        .fit(train);
  }

  @Test
  void medianAndModeEqualImputersOnEveryRow() {
    for (String strategy : List.of("median", "mode", "mean")) {
      FeatureEncoderModel model =
          new FeatureEncoder().setInputCols("x", "k").setImputeStrategy(strategy).fit(train);
      ImputerModel theirs = imputer(strategy);
      Row surrogate = theirs.surrogateDF().first();
      assertEquals(surrogate.getDouble(0), model.imputedValue("x"), 0.0, strategy + " x");
      if (!strategy.equals("mean")) { // Imputer's mean of an int column is cast back to int
        assertEquals(
            ((Number) surrogate.get(1)).doubleValue(), model.imputedValue("k"), 0.0, strategy);
      }
      List<Row> rows =
          theirs
              .transform(model.transform(test))
              .selectExpr("x_imputed", "x_theirs", "k_imputed", "k_theirs", "x_std", "x_isnull")
              .collectAsList();
      for (Row r : rows) {
        assertEquals(
            Double.doubleToLongBits(r.getDouble(1)), Double.doubleToLongBits(r.getDouble(0)));
        if (!strategy.equals("mean")) {
          assertEquals(((Number) r.get(3)).doubleValue(), r.getDouble(2), 0.0, strategy);
        }
        // The standardized value is that of the imputed one.
        assertEquals(model.column("x").standardized(r.getDouble(0)), r.getDouble(4), 0.0, strategy);
      }
      assertTrue(rows.stream().anyMatch(r -> r.getBoolean(5)), "no missing x in the test rows");
    }
  }

  @Test
  void theStrategyAndItsValuesAreSavedWithTheModel(@TempDir Path dir) throws Exception {
    FeatureEncoderModel model =
        new FeatureEncoder().setInputCols("x", "k").setImputeStrategy("median").fit(train);
    String path = dir.resolve("m").toString();
    model.write().save(path);
    FeatureEncoderModel loaded = FeatureEncoderModel.load(path);
    assertEquals("median", loaded.getOrDefault(loaded.imputeStrategy()));
    assertEquals(model.imputedValue("x"), loaded.imputedValue("x"), 0.0);
    FeatureTransformTest.assertSameRows(
        model.transform(test).collectAsList(), loaded.transform(test).collectAsList());
  }

  @Test
  @Tag("gpu")
  void onTheGpuTheMedianAndModeGiveTheCpuImplementationsValuesBitForBit() {
    assertTrue(GpuStatus.current().gpu(), "no GPU: " + GpuStatus.current().reason());
    for (String strategy : List.of("median", "mode")) {
      FeatureEncoderModel model =
          new FeatureEncoder().setInputCols("x", "k").setImputeStrategy(strategy).fit(train);
      GpuRows.assertGpuEqualsCpu(spark, model, test);
    }
  }

  /** The model's kernel on the GPU against its CPU implementation, row by row, bit for bit. */
  static final class GpuRows {
    static void assertGpuEqualsCpu(SparkSession spark, FeatureEncoderModel model, Dataset<Row> in) {
      PipelineReport report = PipelineReport.create(spark);
      List<Row> gpu = model.transformWithReport(in, report).collectAsList();
      assertTrue(report.gpuTasks() > 0, "no task ran on the GPU");
      assertEquals(0, report.cpuTasks(), "tasks ran on the CPU");
      FeaturePlan plan = model.plan.forInput(in.schema());
      plan.layout = FeatureLayout.of(in.schema(), plan, true, "", "");
      List<List<String>> kinds = CpuFeatures.kindFeatures(plan);
      List<Row> rows = in.collectAsList();
      assertEquals(rows.size(), gpu.size());
      for (int i = 0; i < rows.size(); i++) {
        Row want = CpuFeatures.row(plan, kinds, rows.get(i));
        for (int k = 0; k < want.length(); k++) {
          Object w = want.get(k);
          Object g = gpu.get(i).get(k);
          if (w instanceof Double d) {
            assertEquals(
                Double.doubleToLongBits(d),
                Double.doubleToLongBits((Double) g),
                "row " + i + " column " + k);
          } else {
            assertEquals(w, g, "row " + i + " column " + k);
          }
        }
      }
    }
  }
}
