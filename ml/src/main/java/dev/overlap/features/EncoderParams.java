package dev.overlap.features;

import java.io.Serializable;
import java.util.List;
import java.util.Locale;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamPair;
import org.apache.spark.ml.param.ParamValidators;
import org.apache.spark.ml.param.Params;
import org.apache.spark.ml.param.StringArrayParam;
import scala.Function1;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * What the encoder's params are made of: the values they allow, their defaults, the kinds' feature
 * params and the lower case values are held in.
 */
final class EncoderParams {
  /** The end of the doc of a param that acts when fitted, which the model carries as it was. */
  static final String FIXED =
      "; fixed when fitted (the model's value is the one it was fitted with)";

  static final String[] HANDLE_INVALID = {"keep", "skip", "error"};
  static final String[] IMPUTE_STRATEGIES = {"mean", "median", "mode"};
  static final String[] MISSING_FEATURES = {"fitted", "all"};
  static final String[] OUTPUT_TYPES = {"vector", "array<float>", "array<double>"};

  /** Each kind's features, by suffix, in output order: every one is made by default. */
  static final String[] NUMBER_FEATURES = {"std", "log1p"};

  static final String[] DATE_FEATURES = {"dow", "month"};
  static final String[] TIMESTAMP_FEATURES = {"hour", "dow", "month"};
  static final String[] STRING_FEATURES = {"idx"};

  private EncoderParams() {}

  /** The defaults of {@link FeatureEncoderParams}' params, for its owner's {@code setDefault}. */
  static Seq<ParamPair<?>> defaults(FeatureEncoderParams owner) {
    return CollectionConverters.asScala(
            List.<ParamPair<?>>of(
                owner.inputCols().w(new String[0]),
                owner.labelCol().w("label"),
                owner.excludeCols().w(new String[0]),
                owner.vocabularySize().w(20),
                owner.handleInvalid().w("keep"),
                owner.missingFeatures().w("fitted"),
                owner.imputeStrategy().w("mean"),
                owner.keepInputs().w(true),
                owner.outputCol().w(""),
                owner.outputType().w("vector"),
                owner.numberFeatures().w(NUMBER_FEATURES),
                owner.dateFeatures().w(DATE_FEATURES),
                owner.timestampFeatures().w(TIMESTAMP_FEATURES),
                owner.stringFeatures().w(STRING_FEATURES)))
        .toSeq();
  }

  /** A param whose value is one of {@code allowed}. */
  static Param<String> oneOf(Params owner, String name, String doc, String[] allowed) {
    return new Param<>(owner, name, doc, ParamValidators.inArray(allowed));
  }

  /**
   * Which of a kind's features to make: a subset of {@code allowed}, by suffix; {@code _isnull} and
   * {@code _imputed} follow {@code missingFeatures}.
   */
  static StringArrayParam kindFeatures(Params owner, String name, String kind, String[] allowed) {
    List<String> known = List.of(allowed);
    return new StringArrayParam(
        owner,
        name,
        "which features "
            + kind
            + " get, by suffix: any of "
            + String.join(", ", allowed)
            + " (default: all)"
            + FIXED,
        (Function1<String[], Object> & Serializable) values -> known.containsAll(List.of(values)));
  }

  /**
   * A param's line in {@code explainParams}, as Spark ML writes it ({@code name: doc (default: x,
   * current: y)}), with arrays shown by their values.
   */
  static String explain(Params owner, Param<?> p) {
    if (!p.parent().equals(owner.uid()) || !owner.hasParam(p.name())) {
      throw new IllegalArgumentException("Param " + p + " does not belong to " + owner + ".");
    }
    @SuppressWarnings("unchecked")
    Param<Object> param = (Param<Object>) p;
    List<String> values = new java.util.ArrayList<>();
    if (owner.hasDefault(param)) {
      values.add("default: " + shown(owner.getDefault(param).get()));
    }
    if (owner.isSet(param)) {
      values.add("current: " + shown(owner.get(param).get()));
    }
    String value = values.isEmpty() ? "(undefined)" : "(" + String.join(", ", values) + ")";
    return param.name() + ": " + param.doc() + " " + value;
  }

  private static String shown(Object v) {
    return v instanceof String[] a ? "[" + String.join(", ", a) + "]" : String.valueOf(v);
  }

  static String lower(String s) {
    return s.toLowerCase(Locale.ROOT);
  }

  static String[] lower(String[] values) {
    return java.util.Arrays.stream(values).map(EncoderParams::lower).toArray(String[]::new);
  }
}
