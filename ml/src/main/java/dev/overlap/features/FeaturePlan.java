package dev.overlap.features;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * What the features job derives from each input column, with the statistics of the first pass.
 * Shared by the GPU kernel and its CPU implementation so both compute the same function; the
 * features' names are {@link FeatureNames}'.
 */
final class FeaturePlan implements Serializable {
  enum Kind {
    NUMERIC,
    DATE,
    TIMESTAMP,
    /** A wall-clock time without a zone; its parts are its own, whatever the session's zone. */
    TIMESTAMP_NTZ,
    STRING
  }

  /** One input column and what is known about it. */
  static final class Column implements Serializable {
    final String name;
    final Kind kind;

    /**
     * Whether the column gets {@code isnull} and {@code imputed} features: declared nullable, or a
     * float or double column (whose NaN and infinities count as missing, whatever the schema says),
     * until {@link FeaturePlan#missingFeatures} decides it from the fitted data.
     */
    boolean nullable;

    /** How many of the first pass's rows had no value here: nulls, NaN and infinities. */
    long missing;

    /** A float or double column: NaN, +Infinity and -Infinity are treated as missing, as null. */
    boolean floating;

    /**
     * The mean and whether the minimum is non-negative, over the present values: nulls, NaN and
     * infinities left out.
     */
    double mean;

    boolean nonNegative;

    /**
     * What a missing value of a numeric column becomes ({@code _imputed}, and what its other
     * features are made of): by imputeStrategy ({@link ImputedValues}), the mean by default.
     */
    double fill;

    /**
     * A power of two by which the column's values are multiplied before they are standardized: 1,
     * unless its magnitudes are too large or too small for a double's squares ({@link
     * FeatureScale}).
     */
    double scale = 1.0;

    /** The sample standard deviation of the present values times {@link #scale}. */
    double scaledStd;

    List<String> vocabulary = List.of();

    /** How many fitted rows held each value of {@link #vocabulary}, in its order. */
    List<Long> vocabularyCounts = List.of();

    /**
     * What a null becomes in the {@code imputed} column of a date or timestamp: the mean, in days
     * or microseconds since 1970-01-01 (UTC; for TIMESTAMP_NTZ since that wall-clock time),
     * rounded; 0 when every value is null.
     */
    long meanEpoch;

    /**
     * What a null becomes in the {@code imputed} column of a string: its most frequent value (ties
     * by value); the empty string when every value is null.
     */
    String mode = "";

    /** How many NaN and infinite values the first pass found (float and double columns). */
    long nonFinite;

    Column(String name, Kind kind, boolean nullable, boolean floating) {
      this.name = name;
      this.kind = kind;
      this.nullable = nullable || floating;
      this.floating = floating;
    }

    /**
     * The vocabulary and the imputed string from {@code ranked}, the most frequent values with
     * their counts, most frequent first (ties by value): its first {@code size} values, and its
     * first value.
     */
    void setVocabulary(java.util.LinkedHashMap<String, Long> ranked, int size) {
      List<String> values = List.copyOf(ranked.keySet());
      mode = values.isEmpty() ? "" : values.get(0);
      // Copies, not views: a plan is serialized to the executors with its kernel.
      vocabulary = List.copyOf(values.subList(0, Math.min(size, values.size())));
      vocabularyCounts = List.copyOf(List.copyOf(ranked.values()).subList(0, vocabulary.size()));
    }

    /** The sample standard deviation; infinite when a double cannot hold it. */
    double std() {
      return scaledStd / scale;
    }

    /**
     * {@code (v − mean) / deviation}, computed on scaled values so that neither the difference nor
     * the deviation overflows; 0 when the deviation is 0. {@link FeatureKernel} computes the same
     * steps on the GPU.
     */
    double standardized(double v) {
      double centered = v * scale - mean * scale;
      return scaledStd > 0 ? centered / scaledStd : centered * 0.0;
    }
  }

  final List<Column> columns = new ArrayList<>();

  /**
   * Which features each kind gets, by suffix ({@link EncoderParams#NUMBER_FEATURES} and the
   * others); a kind not here gets all of its own. {@code _isnull} and {@code _imputed} follow
   * {@link Column#nullable}.
   */
  final java.util.EnumMap<Kind, List<String>> made = new java.util.EnumMap<>(Kind.class);

  /**
   * Whether the vector holds a number's {@code _imputed} beside its {@code _std}: only in a model
   * saved in format 3 or earlier, whose saved order it keeps.
   */
  boolean imputedInVector;

  /**
   * Whether a string outside the vocabulary is kept (handleInvalid {@code keep}), with index N: set
   * on the copy a model makes for one input, for the index's ML attribute.
   */
  boolean keepInvalid;

  /** How many rows the first pass read. */
  long rows;

  /** When the first pass ran, in milliseconds since 1970-01-01 UTC. */
  long fittedAt;

  /** What the model was fitted on: the folder of the input's files, or a word for a dataset. */
  String fittedOn = "";

  /** Whether the first pass ran as kernels ({@link FirstPass}), not on Spark alone. */
  boolean kernels;

  /** The string columns whose vocabulary came from Spark's aggregation, not the kernels' bound. */
  final List<String> vocabulariesFromSpark = new ArrayList<>();

  final List<String> unsupported = new ArrayList<>();

  /**
   * The columns of an encoded type left out when fitted, each with why ({@code "label
   * (labelCol)"}): only when inputCols named none.
   */
  final List<String> leftOut = new ArrayList<>();

  final int vocabularySize;

  /** Every input column's name, in input order. */
  final List<String> inputNames = new ArrayList<>();

  /**
   * Where the kernel finds the encoded columns and puts the features, set for one input by {@link
   * FeatureTransform}; null: the encoded columns alone, one column per feature.
   */
  FeatureLayout layout;

  /** A plan with no columns yet, for a saved model's. */
  FeaturePlan(int vocabularySize) {
    this.vocabularySize = vocabularySize;
  }

  FeaturePlan(StructType schema, int vocabularySize) {
    this.vocabularySize = vocabularySize;
    for (StructField f : schema.fields()) {
      inputNames.add(f.name());
      Kind k = FeatureKinds.of(f.dataType());
      if (k == null) {
        unsupported.add(f.name() + " (" + f.dataType().simpleString() + ")");
      } else {
        boolean floating = f.dataType() instanceof DoubleType || f.dataType() instanceof FloatType;
        columns.add(new Column(f.name(), k, f.nullable(), floating));
      }
    }
  }

  /**
   * Column {@code c}'s own features, by suffix, in output order, before {@code _isnull} and {@code
   * _imputed}: those of its kind that {@link #made} asks for; {@code log1p} only where the fitted
   * minimum is non-negative.
   */
  List<String> kindFeatures(Column c) {
    String[] all =
        switch (c.kind) {
          case NUMERIC -> EncoderParams.NUMBER_FEATURES;
          case DATE -> EncoderParams.DATE_FEATURES;
          case TIMESTAMP, TIMESTAMP_NTZ -> EncoderParams.TIMESTAMP_FEATURES;
          case STRING -> EncoderParams.STRING_FEATURES;
        };
    List<String> wanted = made.getOrDefault(c.kind, List.of(all));
    List<String> out = new ArrayList<>();
    for (String f : all) {
      if (wanted.contains(f) && (!f.equals("log1p") || c.nonNegative)) {
        out.add(f);
      }
    }
    return out;
  }

  /**
   * Which columns get {@code isnull} and {@code imputed}: every one when {@code all}, else those
   * with missing values in the first pass. A value missing later is still imputed in the others.
   */
  void missingFeatures(boolean all) {
    for (Column c : columns) {
      c.nullable = all || c.missing > 0;
    }
  }

  /**
   * A copy of this fitted plan for applying it to an input of {@code schema}: every fitted column
   * must be there, of a type of the same kind (any number for a number); a float or double column
   * treats NaN and infinities as missing even if the fitted one was of another number type.
   *
   * @throws FeatureInputException naming the column and both types, before any work
   */
  FeaturePlan forInput(StructType schema) {
    return FeatureTransform.forInput(this, schema);
  }

  /** The number of NaN and infinite values found in the first pass, over every column. */
  long nonFiniteCount() {
    return columns.stream().mapToLong(c -> c.nonFinite).sum();
  }

  /** The columns holding NaN or infinite values, comma-separated. */
  String nonFiniteColumns() {
    return String.join(
        ", ", columns.stream().filter(c -> c.nonFinite > 0).map(c -> c.name).toList());
  }

  /** The kernel's input columns: the supported ones, in input order. */
  String[] inputColumns() {
    return columns.stream().map(c -> c.name).toArray(String[]::new);
  }

  /** The layout in force: {@link #layout}, or the encoded columns alone. */
  FeatureLayout layout() {
    return layout != null ? layout : FeatureLayout.encodedOnly(this);
  }

  /**
   * The output schema {@link FeatureKernel} and its CPU implementation produce ({@link #layout}).
   */
  StructType outputSchema() {
    return layout().kernelSchema(this);
  }

  /** The features, without the columns passed through ({@link FeatureNames}). */
  StructType featureOutputSchema() {
    return FeatureNames.schema(this);
  }

  /** The names of column {@code c}'s features, in output order. */
  List<String> featureNames(Column c) {
    return FeatureNames.of(this, c);
  }
}
