package dev.overlap.features;

import java.util.Locale;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamValidators;
import org.apache.spark.ml.param.Params;
import org.apache.spark.ml.param.StringArrayParam;

/** The params {@link FeatureEncoder} and {@link FeatureEncoderModel} share, made for an owner. */
final class EncoderParams {
  static final String[] HANDLE_INVALID = {"keep", "skip", "error"};
  static final String[] MISSING_FEATURES = {"fitted", "all"};

  /** Each kind's features, by suffix, in output order: every one is made by default. */
  static final String[] NUMBER_FEATURES = {"std", "log1p"};

  static final String[] DATE_FEATURES = {"dow", "month"};
  static final String[] TIMESTAMP_FEATURES = {"hour", "dow", "month"};
  static final String[] STRING_FEATURES = {"idx"};

  private EncoderParams() {}

  static StringArrayParam inputCols(Params owner) {
    return new StringArrayParam(
        owner,
        "inputCols",
        "the columns to encode; empty (the default): every column of a type it encodes"
            + " (numbers, dates, timestamps, strings), the others passed through");
  }

  static IntParam vocabularySize(Params owner) {
    return new IntParam(
        owner,
        "vocabularySize",
        "how many of a string column's most frequent values get an index of their own (ties by"
            + " value); the others share the index vocabularySize",
        ParamValidators.inRange(1, 100_000));
  }

  static Param<String> handleInvalid(Params owner) {
    return new Param<>(
        owner,
        "handleInvalid",
        "a string value outside the vocabulary at transform time: keep (index vocabularySize),"
            + " skip (the row is left out) or error; nulls are missing values, not invalid",
        ParamValidators.inArray(HANDLE_INVALID));
  }

  static Param<String> missingFeatures(Params owner) {
    return new Param<>(
        owner,
        "missingFeatures",
        "which columns get _isnull and _imputed: fitted (those with missing values when fitted)"
            + " or all",
        ParamValidators.inArray(MISSING_FEATURES));
  }

  /**
   * Which of a kind's features to make: a subset of {@code allowed}, by suffix; {@code _isnull} and
   * {@code _imputed} follow {@code missingFeatures}.
   */
  static StringArrayParam kindFeatures(Params owner, String name, String kind, String[] allowed) {
    java.util.List<String> known = java.util.List.of(allowed);
    return new StringArrayParam(
        owner,
        name,
        "which features "
            + kind
            + " get, by suffix: any of "
            + String.join(", ", allowed)
            + " (default: all)",
        (scala.Function1<String[], Object> & java.io.Serializable)
            values -> known.containsAll(java.util.List.of(values)));
  }

  static String lower(String s) {
    return s.toLowerCase(Locale.ROOT);
  }
}
