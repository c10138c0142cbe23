package dev.overlap.jobs.features;

import dev.overlap.features.FeatureEncoderModel;
import dev.overlap.jobs.cli.JobArgs;
import dev.overlap.jobs.cli.JobCommand;
import dev.overlap.jobs.cli.JobPaths;
import dev.overlap.jobs.cli.JobSummary;
import dev.overlap.jobs.cli.UsageException;
import dev.overlap.jobs.delta.JobInput;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;

/**
 * {@code features [--input PATH [--format delta [--version N]]] [--output DIR] [--vocabulary N]
 * [--save-model DIR | --model DIR] [--fit-only] [--keep-inputs] [--vector-col NAME [--vector-type
 * T]]}: the feature encoder fitted on an input, or a saved one, applied to it ({@link
 * FeaturesJob}); with {@code --fit-only}, the model alone.
 */
public final class FeaturesCommand implements JobCommand {
  static final int MAX_VOCABULARY = 100_000;

  @Override
  public String name() {
    return "features";
  }

  @Override
  public List<String> values() {
    return List.of(
        "--input",
        "--format",
        "--version",
        "--output",
        "--vocabulary",
        "--model",
        "--save-model",
        "--vector-col",
        "--vector-type");
  }

  @Override
  public List<String> flags() {
    return List.of("--fit-only", "--keep-inputs");
  }

  @Override
  public Map<String, String> examples() {
    return Map.of(
        "--vocabulary", "--vocabulary 20",
        "--vector-col", "--vector-col features",
        "--model", "--model models/features",
        "--save-model", "--save-model models/features");
  }

  /** {@code --vocabulary}, then the model options: which go together. */
  @Override
  public void check(JobArgs a) {
    if (a.has("--vocabulary")) {
      vocabulary(a);
    }
    if (a.has("--fit-only") && !a.has("--save-model")) {
      throw new UsageException(
          "--fit-only fits a model and writes no features: give --save-model DIR for the model");
    }
    if (a.has("--fit-only") && a.has("--output")) {
      throw new UsageException("--fit-only writes no features: drop --output, or drop --fit-only");
    }
    if (a.has("--model") && (a.has("--save-model") || a.has("--fit-only"))) {
      throw new UsageException(
          "--model applies a saved model and fits none: drop --save-model and --fit-only, or"
              + " drop --model to fit one");
    }
    if (a.has("--model") && a.has("--vocabulary")) {
      throw new UsageException(
          "--model applies a saved model, whose vocabularies were fixed when it was fitted: drop"
              + " --vocabulary");
    }
  }

  /** {@code --fit-only} writes no features. */
  @Override
  public boolean writesOutput(JobArgs a) {
    return !a.has("--fit-only");
  }

  @Override
  public Run prepare(JobArgs a, JobPaths paths, String output) throws IOException {
    ModelOptions model = ModelOptions.check(a, paths, output);
    OutputOptions outputs = OutputOptions.check(a);
    int vocabulary = vocabulary(a);
    if (output == null) {
      return new Run() {
        @Override
        public long run(SparkSession spark, String input, String to, JobSummary summary) {
          return FeaturesJob.fitOnly(spark, JobInput.of(a, input), vocabulary, model, summary);
        }

        @Override
        public String done(String output) {
          return "saved its model to " + model.save();
        }
      };
    }
    return new Run() {
      private FeatureEncoderModel fitted;

      @Override
      public long run(SparkSession spark, String input, String to, JobSummary summary) {
        FeaturesJob.Result r =
            FeaturesJob.run(spark, JobInput.of(a, input), to, vocabulary, model, outputs, summary);
        fitted = r.model();
        return r.rows();
      }

      /** The model only once the features it goes with are in place. */
      @Override
      public void committed(JobSummary summary) {
        FeaturesJob.save(fitted, model, summary);
      }
    };
  }

  /** {@code --vocabulary}: a whole number from 1 to {@value #MAX_VOCABULARY}; 20 by default. */
  static int vocabulary(JobArgs a) {
    return a.wholeNumber("--vocabulary", 20, 1, MAX_VOCABULARY);
  }
}
