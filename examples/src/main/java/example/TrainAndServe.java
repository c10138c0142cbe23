package example;

import dev.overlap.features.FeatureEncoder;
import dev.overlap.features.FeatureEncoderModel;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/** Fits the feature encoder on training data, saves it, and applies it to later data. */
public final class TrainAndServe {
  private TrainAndServe() {}

  /** {@code TRAIN TEST MODEL_DIR OUTPUT}: Parquet in, the model and the test features out. */
  public static void main(String[] args) throws Exception {
    SparkSession spark = SparkSession.builder().getOrCreate();
    Dataset<Row> train = spark.read().parquet(args[0]);
    FeatureEncoderModel model =
        new FeatureEncoder().setVocabularySize(50).setHandleInvalid("keep").fit(train);
    model.write().overwrite().save(args[2]);

    // Later, in this job or another: the training data's means, vocabularies and columns.
    FeatureEncoderModel loaded = FeatureEncoderModel.load(args[2]);
    Dataset<Row> test = spark.read().parquet(args[1]);
    loaded.transform(test).write().parquet(args[3]);
  }
}
