package dev.overlap.features;

import dev.overlap.executor.api.Public;
import org.apache.spark.ml.param.BooleanParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamValidators;
import org.apache.spark.ml.param.Params;
import org.apache.spark.ml.param.StringArrayParam;

/**
 * The params {@link FeatureEncoder} and {@link FeatureEncoderModel} share, as Spark ML's own
 * estimators and models share theirs: each is a public method returning the param, which is how
 * Spark ML finds a stage's params. A call makes the param anew; Spark ML tells params apart by
 * their owner's uid and their name ({@link Param#equals}), so each call's is the same param to it.
 */
@Public
public interface FeatureEncoderParams extends Params {
  /**
   * The columns to encode; empty (the default): every column of a type the encoder encodes but
   * {@link #labelCol} and {@link #excludeCols}.
   */
  default StringArrayParam inputCols() {
    return new StringArrayParam(
        this,
        "inputCols",
        "the columns to encode; empty (the default): every column of a type it encodes"
            + " (numbers, dates, timestamps, strings) but labelCol and excludeCols, the others"
            + " passed through"
            + EncoderParams.FIXED);
  }

  /**
   * The label column, as Spark ML's predictors name it (default {@code label}): left out of the
   * features unless {@code inputCols} names it.
   */
  default Param<String> labelCol() {
    return new Param<>(
        this,
        "labelCol",
        "the label column, as Spark ML's predictors name it: left out of the features unless"
            + " inputCols names it"
            + EncoderParams.FIXED);
  }

  /** Columns left out of the features when {@code inputCols} is empty; none by default. */
  default StringArrayParam excludeCols() {
    return new StringArrayParam(
        this,
        "excludeCols",
        "columns left out of the features (each must be in the input), passed through as they"
            + " are; none by default"
            + EncoderParams.FIXED);
  }

  /** How many of a string column's most frequent values get an index of their own. */
  default IntParam vocabularySize() {
    return new IntParam(
        this,
        "vocabularySize",
        "how many of a string column's most frequent values, at most, get an index of their own"
            + " (ties by value); the others share the index N, the size of the fitted vocabulary"
            + " (vocabularySize, or fewer where the column had fewer distinct values)"
            + EncoderParams.FIXED,
        ParamValidators.inRange(1, 100_000));
  }

  /** What a string outside the vocabulary gets at transform time: keep, skip or error. */
  default Param<String> handleInvalid() {
    return EncoderParams.oneOf(
        this,
        "handleInvalid",
        "a string value outside the vocabulary at transform time: keep (index N, the size of the"
            + " fitted vocabulary), skip (the row is left out) or error; nulls are missing values,"
            + " not invalid, and get index N",
        EncoderParams.HANDLE_INVALID);
  }

  /** Which columns get {@code _isnull} and {@code _imputed}: fitted or all. */
  default Param<String> missingFeatures() {
    return EncoderParams.oneOf(
        this,
        "missingFeatures",
        "which columns get _isnull and _imputed: fitted (those with missing values when fitted)"
            + " or all"
            + EncoderParams.FIXED,
        EncoderParams.MISSING_FEATURES);
  }

  /** What a missing number becomes: mean, median or mode, as Spark ML's {@code Imputer}. */
  default Param<String> imputeStrategy() {
    return EncoderParams.oneOf(
        this,
        "imputeStrategy",
        "what a missing number (null, NaN, an infinity) becomes in _imputed and the features made"
            + " of it: mean, median (exact, as Imputer's with relativeError 0) or mode (the most"
            + " frequent value, the smallest of ties), as Imputer's strategy, over the present"
            + " values; dates and timestamps get their mean, strings their most frequent value"
            + EncoderParams.FIXED,
        EncoderParams.IMPUTE_STRATEGIES);
  }

  /** Whether transform keeps every input column (true, the default) or drops those it encodes. */
  default BooleanParam keepInputs() {
    return new BooleanParam(
        this,
        "keepInputs",
        "whether transform keeps every input column, the features after them (true, as Spark ML's"
            + " transformers do), or drops the columns it encodes, the features first (false)");
  }

  /** The one column holding every numeric feature, in the model's order; empty: one per feature. */
  default Param<String> outputCol() {
    return new Param<>(
        this,
        "outputCol",
        "one column holding the numeric features in the model's order (vectorFeatures: each"
            + " input once), as outputType; empty (the default): one column per feature");
  }

  /** outputCol's type: vector, array&lt;float&gt; or array&lt;double&gt;. */
  default Param<String> outputType() {
    return EncoderParams.oneOf(
        this,
        "outputType",
        "outputCol's type: vector (Spark ML's Vector, with the features' ML attributes, an"
            + " index's nominal), array<float> or array<double>",
        EncoderParams.OUTPUT_TYPES);
  }

  /**
   * Which features numbers get: {@code std}, {@code log1p} (where the minimum is non-negative).
   * Fixed when fitted: the model's value is the one it was fitted with.
   */
  default StringArrayParam numberFeatures() {
    return EncoderParams.kindFeatures(
        this, "numberFeatures", "numbers", EncoderParams.NUMBER_FEATURES);
  }

  /** Which features dates get: {@code dow}, {@code month}. */
  default StringArrayParam dateFeatures() {
    return EncoderParams.kindFeatures(this, "dateFeatures", "dates", EncoderParams.DATE_FEATURES);
  }

  /** Which features timestamps and timestamp_ntz get: {@code hour}, {@code dow}, {@code month}. */
  default StringArrayParam timestampFeatures() {
    return EncoderParams.kindFeatures(
        this,
        "timestampFeatures",
        "timestamps and timestamp_ntz",
        EncoderParams.TIMESTAMP_FEATURES);
  }

  /** Which features strings get: {@code idx}, or none. */
  default StringArrayParam stringFeatures() {
    return EncoderParams.kindFeatures(
        this, "stringFeatures", "strings", EncoderParams.STRING_FEATURES);
  }
}
