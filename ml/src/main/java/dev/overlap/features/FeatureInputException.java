package dev.overlap.features;

import dev.overlap.executor.api.Public;

/**
 * Input the feature encoder cannot take, said in one line that names the column and what to do: a
 * column the model needs and the input lacks, a type it cannot read as the fitted one, names Spark
 * could not tell apart. Thrown before any work.
 */
@Public
public final class FeatureInputException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public FeatureInputException(String message) {
    super(message);
  }
}
