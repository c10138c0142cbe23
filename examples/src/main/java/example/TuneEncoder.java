package example;

import dev.overlap.features.FeatureEncoder;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.evaluation.BinaryClassificationEvaluator;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.tuning.CrossValidator;
import org.apache.spark.ml.tuning.CrossValidatorModel;
import org.apache.spark.ml.tuning.ParamGridBuilder;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/** Tunes the encoder's own params with the model's, by cross-validation. */
public final class TuneEncoder {
  private TuneEncoder() {}

  /** {@code DATA LABEL MODEL_DIR}: Parquet in, the cross-validated model out. */
  public static void main(String[] args) throws Exception {
    SparkSession spark = SparkSession.builder().getOrCreate();
    Dataset<Row> data = spark.read().parquet(args[0]);
    FeatureEncoder encoder = new FeatureEncoder().setInputCols("x", "city").setOutputCol("v");
    LogisticRegression lr =
        new LogisticRegression().setLabelCol(args[1]).setFeaturesCol("v").setMaxIter(20);
    ParamMap[] grid =
        new ParamGridBuilder()
            .addGrid(encoder.vocabularySize(), new int[] {2, 20})
            .addGrid(lr.regParam(), new double[] {0.0, 0.1})
            .build();
    CrossValidatorModel cv =
        new CrossValidator()
            .setEstimator(new Pipeline().setStages(new PipelineStage[] {encoder, lr}))
            .setEvaluator(new BinaryClassificationEvaluator().setLabelCol(args[1]))
            .setEstimatorParamMaps(grid)
            .setNumFolds(3)
            .setSeed(7)
            .fit(data);
    cv.write().overwrite().save(args[2]);
    for (int i = 0; i < grid.length; i++) { // each setting's mean AUC over the folds
      System.out.println(grid[i] + " AUC " + cv.avgMetrics()[i]);
    }
  }
}
