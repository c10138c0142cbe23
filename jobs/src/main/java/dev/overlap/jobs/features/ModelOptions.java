package dev.overlap.jobs.features;

import dev.overlap.jobs.cli.JobArgs;
import dev.overlap.jobs.cli.JobPaths;
import dev.overlap.jobs.cli.PathRelations;
import dev.overlap.jobs.cli.UsageException;
import java.io.IOException;
import java.util.List;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * features' model folders, checked before any work: {@code --model DIR} must hold a saved model;
 * {@code --save-model DIR} is a user's folder like an output (not the input, the project, the home
 * folder…), and an existing one is replaced only when it holds a saved model and {@code
 * --overwrite} is given. The model itself is written beside it and put in place whole ({@code
 * FeatureEncoderModel.write}).
 *
 * @param load the folder to load a model from, or null
 * @param save the folder to save the fitted model to, or null
 * @param overwrite whether an existing model at {@code save} may be replaced
 */
public record ModelOptions(String load, String save, boolean overwrite) {
  static final ModelOptions NONE = new ModelOptions(null, null, false);

  /** The model options of {@code a}, checked; {@code output} is the job's output, or null. */
  public static ModelOptions check(JobArgs a, JobPaths paths, String output) throws IOException {
    if (!a.job.equals("features")) {
      return NONE;
    }
    String load = a.get("--model").orElse(null);
    String save = a.get("--save-model").orElse(null);
    if (load != null && !isModel(paths, load)) {
      throw new UsageException(
          "--model '"
              + load
              + "' holds no saved model (no metadata folder); give the folder"
              + " that --save-model wrote");
    }
    if (load != null && !paths.fs(load).exists(new Path(paths.qualified(load), "data"))) {
      throw new UsageException(
          "--model '"
              + load
              + "' holds a model's metadata but no data folder (its fitted statistics); give the"
              + " whole folder that --save-model wrote");
    }
    if (save != null) {
      List<Path> inputs = a.get("--input").map(paths::input).orElse(List.of());
      paths.checkOutputPlace("--save-model", save, inputs);
      if (output != null) {
        Path out = paths.qualified(output);
        Path model = paths.qualified(save);
        if (PathRelations.sameOrInside(model, out) || PathRelations.sameOrInside(out, model)) {
          throw new UsageException(
              "--save-model '"
                  + save
                  + "' and --output '"
                  + output
                  + "' overlap, and replacing the output would delete the model: choose a folder"
                  + " outside the output for the model");
        }
      }
      FileSystem fs = paths.fs(save);
      Path target = paths.qualified(save);
      if (fs.exists(target)) {
        if (!isModel(paths, save)) {
          throw new UsageException(
              "--save-model '"
                  + save
                  + "' exists and holds no saved model; it is not replaced:"
                  + " choose another folder");
        }
        if (!a.has(JobArgs.OVERWRITE)) {
          throw new UsageException(
              "--save-model '" + save + "' holds a saved model; pass --overwrite to replace it");
        }
      }
    }
    return new ModelOptions(load, save, a.has(JobArgs.OVERWRITE));
  }

  private static boolean isModel(JobPaths paths, String dir) throws IOException {
    return paths.fs(dir).exists(new Path(paths.qualified(dir), "metadata"));
  }
}
