package dev.overlap.jobs.features;

import dev.overlap.jobs.cli.JobSummary;
import dev.overlap.jobs.delta.JobInput;
import org.apache.spark.sql.SparkSession;

/** The features job as the tests of other packages run it: fitted on its input, no saved model. */
public final class TestFeaturesJob {
  private TestFeaturesJob() {}

  /**
   * Fits a {@code FeatureEncoder} on {@code input}'s Parquet and writes its features of the same
   * data to {@code output}; returns the rows written.
   */
  public static long run(
      SparkSession spark, String input, String output, int vocab, JobSummary summary) {
    return FeaturesJob.run(
            spark,
            JobInput.parquet(input),
            output,
            vocab,
            ModelOptions.NONE,
            OutputOptions.NONE,
            summary)
        .rows();
  }
}
