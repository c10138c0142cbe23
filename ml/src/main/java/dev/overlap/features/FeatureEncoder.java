package dev.overlap.features;

import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.api.Public;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.ml.Estimator;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Features by column type, fitted on one input and applied to any other: Spark ML's {@link
 * Estimator}, so it works alone or as a stage of a {@code Pipeline}. {@link #fit} runs the first
 * pass (on the GPU, kernels over the GPU's Parquet scan with their partial aggregates merged on the
 * driver; without one, Spark's own aggregation) and returns a {@link FeatureEncoderModel} holding
 * every column's statistics; its {@code transform} applies them on the GPU, or through the same
 * function on the CPU where there is none.
 *
 * <p>What each type gets: numbers are standardized ({@code _std}: (x − mean) / sample deviation, as
 * Spark ML's {@code StandardScaler} with mean and deviation), and {@code _log1p} where the fitted
 * minimum is non-negative; dates get day of week and month, timestamps hour, day of week and month
 * (in UTC; {@code timestamp_ntz} by its own wall clock); strings an index in the vocabulary of the
 * {@code vocabularySize} most frequent values (most frequent first, ties by value, as {@code
 * StringIndexer}'s {@code frequencyDesc}). Columns with missing values when fitted (nulls, and NaN
 * or infinities in float and double columns) also get {@code _isnull} and {@code _imputed} (the
 * mean, as {@code Imputer}'s {@code mean}; the mean day or instant; the most frequent string);
 * {@code missingFeatures = "all"} gives them to every column.
 */
@Public
public final class FeatureEncoder extends Estimator<FeatureEncoderModel>
    implements FeatureEncoderParams, MLWritable {
  private static final long serialVersionUID = 1L;

  private static final Logger LOG = LoggerFactory.getLogger("dev.overlap");

  private final String uid;

  public FeatureEncoder() {
    this(Identifiable.randomUID("featureEncoder"));
  }

  public FeatureEncoder(String uid) {
    this.uid = uid;
    setDefault(EncoderParams.defaults(this));
  }

  @Override
  public String uid() {
    return uid;
  }

  public FeatureEncoder setNumberFeatures(String... suffixes) {
    set(numberFeatures(), EncoderParams.lower(suffixes));
    return this;
  }

  public FeatureEncoder setDateFeatures(String... suffixes) {
    set(dateFeatures(), EncoderParams.lower(suffixes));
    return this;
  }

  public FeatureEncoder setTimestampFeatures(String... suffixes) {
    set(timestampFeatures(), EncoderParams.lower(suffixes));
    return this;
  }

  public FeatureEncoder setStringFeatures(String... suffixes) {
    set(stringFeatures(), EncoderParams.lower(suffixes));
    return this;
  }

  /**
   * A plan that makes no feature at all (no column of a type it encodes, or every kind's features
   * left out and no missing values) would give rows of no columns, which neither the GPU nor
   * Parquet can hold: refused, naming the columns of {@code input}.
   */
  private static void requireFeatures(FeaturePlan plan, StructType input) {
    if (plan.columns.isEmpty()) {
      throw new FeatureInputException(FeatureKinds.noneEncoded(input));
    }
    if (plan.featureOutputSchema().isEmpty()) {
      throw new FeatureInputException(
          "the encoder would make no feature of "
              + String.join(", ", List.of(plan.inputColumns()))
              + ": choose at least one in numberFeatures, dateFeatures, timestampFeatures or"
              + " stringFeatures, or set missingFeatures to all");
    }
  }

  /** The features each kind gets, as {@link FeaturePlan#made} holds them. */
  private void made(FeaturePlan plan) {
    plan.made.put(FeaturePlan.Kind.NUMERIC, List.of($(numberFeatures())));
    plan.made.put(FeaturePlan.Kind.DATE, List.of($(dateFeatures())));
    plan.made.put(FeaturePlan.Kind.TIMESTAMP, List.of($(timestampFeatures())));
    plan.made.put(FeaturePlan.Kind.TIMESTAMP_NTZ, List.of($(timestampFeatures())));
    plan.made.put(FeaturePlan.Kind.STRING, List.of($(stringFeatures())));
  }

  public FeatureEncoder setInputCols(String... names) {
    set(inputCols(), names);
    return this;
  }

  /** The label column, left out of the features unless {@code inputCols} names it. */
  public FeatureEncoder setLabelCol(String name) {
    set(labelCol(), name);
    return this;
  }

  /** Columns left out of the features when {@code inputCols} is empty. */
  public FeatureEncoder setExcludeCols(String... names) {
    set(excludeCols(), names);
    return this;
  }

  public FeatureEncoder setVocabularySize(int n) {
    set(vocabularySize(), n);
    return this;
  }

  public FeatureEncoder setHandleInvalid(String mode) {
    set(handleInvalid(), EncoderParams.lower(mode));
    return this;
  }

  /** Whether transform keeps every input column (true, the default) or drops those it encodes. */
  public FeatureEncoder setKeepInputs(boolean keep) {
    set(keepInputs(), keep);
    return this;
  }

  /**
   * One column of every numeric feature, in the model's order; empty (default): one per feature.
   */
  public FeatureEncoder setOutputCol(String name) {
    set(outputCol(), name);
    return this;
  }

  /**
   * {@link #setOutputCol}'s type: vector (the default), array&lt;float&gt; or array&lt;double&gt;.
   */
  public FeatureEncoder setOutputType(String type) {
    set(outputType(), EncoderParams.lower(type));
    return this;
  }

  /** What a missing number becomes: mean (the default), median or mode, as {@code Imputer}. */
  public FeatureEncoder setImputeStrategy(String strategy) {
    set(imputeStrategy(), EncoderParams.lower(strategy));
    return this;
  }

  public FeatureEncoder setMissingFeatures(String which) {
    set(missingFeatures(), EncoderParams.lower(which));
    return this;
  }

  @Override
  public FeatureEncoderModel fit(Dataset<?> dataset) {
    return fitWithReports(dataset, null, null);
  }

  /**
   * {@link #fit}, with the first pass's pipeline figures in {@code partials} and those of the exact
   * counting of vocabularies in {@code counts} (either may be null).
   */
  public FeatureEncoderModel fitWithReports(
      Dataset<?> dataset, PipelineReport partials, PipelineReport counts) {
    @SuppressWarnings("unchecked")
    Dataset<Row> all = (Dataset<Row>) dataset;
    InputColumns.check(all);
    InputChoice choice = choice(all.schema());
    if (choice.chosen().isEmpty()) { // refused before the first pass
      throw new FeatureInputException(choice.noneChosen(all.schema()));
    }
    if (!choice.named()) {
      LOG.info("features: {}", choice.said());
    }
    Dataset<Row> in =
        choice.chosen().equals(all.schema()) ? all : all.select(InputColumns.cols(choice.names()));
    int vocab = (Integer) $(vocabularySize());
    List<String> onSpark = new ArrayList<>();
    FeaturePlan encoded = new FeaturePlan(in.schema(), vocab);
    boolean kernels = FirstPass.kernelFirstPass(all.sparkSession(), encoded.columns.size());
    FeaturePlan plan =
        kernels
            ? FirstPass.kernels(in, vocab, partials, counts, onSpark)
            : SparkFirstPass.plan(in, vocab);
    plan.kernels = kernels;
    plan.leftOut.addAll(choice.leftOut());
    plan.vocabulariesFromSpark.addAll(onSpark);
    plan.missingFeatures($(missingFeatures()).equals("all"));
    ImputedValues.fill(in, plan, $(imputeStrategy()));
    made(plan);
    requireFeatures(plan, all.schema());
    plan.inputNames.clear();
    plan.inputNames.addAll(List.of(all.columns()));
    plan.fittedAt = System.currentTimeMillis();
    plan.fittedOn = InputColumns.source(all);
    FeatureEncoderModel model = new FeatureEncoderModel(uid, plan);
    copyValues(model, extractParamMap());
    return model.setParent(this);
  }

  /** The columns of {@code schema} it encodes ({@link InputChoice}), checked. */
  private InputChoice choice(StructType schema) {
    return InputChoice.of(schema, $(inputCols()), $(labelCol()), $(excludeCols()));
  }

  /**
   * The columns {@link #fit} would encode of an input of {@code schema}, in order: those {@code
   * inputCols} names, or every column of a type it encodes but {@code labelCol} and {@code
   * excludeCols}; checked as {@link #fit} checks them, before any work.
   */
  public String[] columnsToEncode(StructType schema) {
    return choice(schema).names();
  }

  /**
   * Every feature a fitted model may make of this input, beside the columns kept: which columns get
   * {@code _log1p}, {@code _isnull} and {@code _imputed} is known only once fitted, so this names
   * them all (the fitted model's {@code transformSchema} names those it makes).
   */
  @Override
  public StructType transformSchema(StructType schema) {
    InputChoice choice = choice(schema);
    if (choice.chosen().isEmpty()) {
      throw new FeatureInputException(choice.noneChosen(schema));
    }
    StructType in = choice.chosen();
    FeaturePlan widest = new FeaturePlan(in, (Integer) $(vocabularySize()));
    made(widest);
    for (FeaturePlan.Column c : widest.columns) {
      c.nullable = true;
      c.nonNegative = true;
    }
    requireFeatures(widest, schema);
    widest.inputNames.clear();
    widest.inputNames.addAll(List.of(schema.fieldNames()));
    String type = $(outputType());
    FeatureLayout layout =
        FeatureLayout.of(schema, widest, (Boolean) $(keepInputs()), $(outputCol()), type);
    return FeatureVectors.schema(layout, widest, type);
  }

  @Override
  public String explainParam(org.apache.spark.ml.param.Param<?> param) {
    return EncoderParams.explain(this, param);
  }

  @Override
  public FeatureEncoder copy(ParamMap extra) {
    return defaultCopy(extra);
  }

  /** Saves the params, in Spark ML's layout ({@code metadata/}). */
  @Override
  public MLWriter write() {
    return new ModelFiles.Writer(this);
  }

  public static MLReader<FeatureEncoder> read() {
    return new ModelReader<>(FeatureEncoder.class);
  }

  public static FeatureEncoder load(String path) {
    return read().load(path);
  }
}
