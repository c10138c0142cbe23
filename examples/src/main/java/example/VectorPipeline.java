package example;

import dev.overlap.features.FeatureEncoder;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.evaluation.BinaryClassificationEvaluator;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/** A train/test split, the encoder's vector into a logistic regression, the pipeline saved. */
public final class VectorPipeline {
  private VectorPipeline() {}

  /** {@code DATA LABEL MODEL_DIR}: Parquet in, the fitted pipeline out; prints the test AUC. */
  public static void main(String[] args) throws Exception {
    SparkSession spark = SparkSession.builder().getOrCreate();
    Dataset<Row>[] split = spark.read().parquet(args[0]).randomSplit(new double[] {0.8, 0.2}, 7);
    FeatureEncoder encoder =
        new FeatureEncoder()
            .setInputCols("x", "city") // the label stays out of the features
            .setOutputCol("features"); // one dense vector, every feature in the model's order
    LogisticRegression lr = new LogisticRegression().setLabelCol(args[1]).setMaxIter(20);
    PipelineModel model =
        new Pipeline().setStages(new PipelineStage[] {encoder, lr}).fit(split[0]);
    model.write().overwrite().save(args[2]);

    double auc =
        new BinaryClassificationEvaluator()
            .setLabelCol(args[1])
            .evaluate(model.transform(split[1]).coalesce(1));
    System.out.println("test AUC " + auc);
  }
}
