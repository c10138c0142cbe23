package dev.overlap.features;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.api.Public;
import dev.overlap.executor.api.Written;
import java.util.List;
import org.apache.spark.ml.Model;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.StructType;

/**
 * The statistics a {@link FeatureEncoder} fitted, applied to any input that has the fitted columns:
 * the same means, deviations, imputed values and vocabulary indices whatever the new data holds,
 * and the same output columns. {@link #transform} runs the features kernel on the GPU (its CPU
 * implementation, with equal results, where there is none). It is a lazy, narrow map, as Spark ML's
 * transformers are: no Spark job runs before an action, and the output has the input's partitions
 * and row order. Columns the model does not encode pass through the kernel unchanged, after the
 * features. Saved and loaded in Spark ML's layout ({@link #write}, {@link #load}), also inside a
 * {@code PipelineModel}.
 */
@Public
public final class FeatureEncoderModel extends Model<FeatureEncoderModel>
    implements FeatureEncoderParams, MLWritable {
  private static final long serialVersionUID = 1L;

  private final String uid;
  final FeaturePlan plan;

  FeatureEncoderModel(String uid, FeaturePlan plan) {
    this.uid = uid;
    this.plan = plan;
    setDefault(EncoderParams.defaults(this));
  }

  @Override
  public String uid() {
    return uid;
  }

  /** How a string outside the vocabulary is handled from now on: keep, skip or error. */
  public FeatureEncoderModel setHandleInvalid(String mode) {
    set(handleInvalid(), EncoderParams.lower(mode));
    return this;
  }

  /** Whether {@link #transform} keeps every input column (true) or drops those it encodes. */
  public FeatureEncoderModel setKeepInputs(boolean keep) {
    set(keepInputs(), keep);
    return this;
  }

  /** The one column of every numeric feature ({@link #vectorFeatures}); empty: one per feature. */
  public FeatureEncoderModel setOutputCol(String name) {
    set(outputCol(), name);
    return this;
  }

  /** {@link #setOutputCol}'s type: vector, array&lt;float&gt; or array&lt;double&gt;. */
  public FeatureEncoderModel setOutputType(String type) {
    set(outputType(), EncoderParams.lower(type));
    return this;
  }

  // ---- what was fitted ---------------------------------------------------------------------

  /** The encoded columns, in input order. */
  public String[] encodedColumns() {
    return plan.inputColumns();
  }

  /**
   * The columns of an encoded type the model leaves out, each with why ({@code "label (labelCol)"},
   * {@code "id (excludeCols)"}); empty when {@code inputCols} named the columns.
   */
  public List<String> leftOutColumns() {
    return List.copyOf(plan.leftOut);
  }

  /** How many rows the model was fitted on. */
  public long fittedRows() {
    return plan.rows;
  }

  /** When the model was fitted, in milliseconds since 1970-01-01 UTC. */
  public long fittedAt() {
    return plan.fittedAt;
  }

  /** Whether the first pass ran as kernels through the pipeline, not as Spark's aggregation. */
  public boolean fittedByKernels() {
    return plan.kernels;
  }

  /** The string columns whose vocabulary the kernels' bound did not prove, so Spark counted. */
  public List<String> vocabulariesFromSpark() {
    return List.copyOf(plan.vocabulariesFromSpark);
  }

  /** How many NaN and infinite values the fitted data held, treated as missing. */
  public long nonFiniteValues() {
    return plan.nonFiniteCount();
  }

  /** The columns that held NaN or infinite values when fitted. */
  public List<String> nonFiniteColumns() {
    return plan.columns.stream().filter(c -> c.nonFinite > 0).map(c -> c.name).toList();
  }

  /** What the model was fitted on: the folder of the input's files. */
  public String fittedOn() {
    return plan.fittedOn;
  }

  /** A numeric column's fitted mean (over its present values). */
  public double mean(String column) {
    return column(column).mean;
  }

  /** What a numeric column's missing value becomes, by imputeStrategy: its mean, median or mode. */
  public double imputedValue(String column) {
    return column(column).fill;
  }

  /** A numeric column's fitted sample deviation; infinite when a double cannot hold it. */
  public double std(String column) {
    return column(column).std();
  }

  /** How many fitted rows had no value in the column: nulls, NaN and infinities. */
  public long missing(String column) {
    return column(column).missing;
  }

  /** A string column's vocabulary, most frequent first: value i gets index i. */
  public List<String> vocabulary(String column) {
    return column(column).vocabulary;
  }

  /**
   * How many rows of the data it was fitted on held each value of {@link #vocabulary}, in the same
   * order (exact counts); empty for a model saved before the counts were kept.
   */
  public List<Long> vocabularyCounts(String column) {
    return column(column).vocabularyCounts;
  }

  /** The features made of each column, by name, in output order. */
  public List<String> features(String column) {
    return plan.featureNames(column(column));
  }

  /** Every feature the model makes, by name, in output order. */
  public List<String> featureNames() {
    return List.of(plan.featureOutputSchema().fieldNames());
  }

  /**
   * The features an {@code outputCol} holds, in its order, which the model saves: every numeric
   * feature (booleans as 1 and 0) but the imputed dates, timestamps and strings, and each input
   * once: a number with missing values gives its {@code _std} and {@code _isnull}, not its {@code
   * _imputed} as well (an affine function of its {@code _std}). Every feature stays a column of its
   * own when {@code outputCol} is empty.
   */
  public List<String> vectorFeatures() {
    return FeatureNames.numericNames(plan);
  }

  FeaturePlan.Column column(String name) {
    for (FeaturePlan.Column c : plan.columns) {
      if (c.name.equals(name)) {
        return c;
      }
    }
    throw new FeatureInputException("the model encodes no column '" + name + "'");
  }

  // ---- applying it --------------------------------------------------------------------------

  /**
   * The features of each row, then its columns the model does not encode, unchanged; lazy (no Spark
   * job before an action), with the input's partitions and row order. Under adaptive execution, an
   * input with a shuffle of its own has it run at once, as {@code Dataset.rdd} does.
   */
  @Override
  public Dataset<Row> transform(Dataset<?> dataset) {
    return transformWithReport(dataset, null);
  }

  /** {@link #transform}, with the features pass's pipeline figures in {@code report}. */
  public Dataset<Row> transformWithReport(Dataset<?> dataset, PipelineReport report) {
    @SuppressWarnings("unchecked")
    Dataset<Row> in = (Dataset<Row>) dataset;
    FeaturePlan p = applied(in.schema());
    return FeatureTransform.features(
        InvalidStrings.valid(in, p, $(handleInvalid())), p, layout(in.schema(), p), type(), report);
  }

  /**
   * The features of {@code dataset} written as Parquet with the GPU encoding them (Spark's writer
   * on executors without one); only when every input column is encoded (see {@link
   * #passesThrough}), else use {@link #transform} and Spark's writer.
   */
  public Written writeParquet(Dataset<?> dataset, ParquetOutput output, PipelineReport report) {
    @SuppressWarnings("unchecked")
    Dataset<Row> in = (Dataset<Row>) dataset;
    FeaturePlan p = applied(in.schema());
    List<String> passed = FeatureTransform.passedThroughNames(in.schema(), p);
    if (!passed.isEmpty()) {
      throw new FeatureInputException(
          "writeParquet takes only the encoded columns; these would pass through: "
              + passed
              + ". Select the encoded columns, or use transform and Spark's writer");
    }
    if (!$(outputCol()).isEmpty() && type().equals(FeatureVectors.VECTOR)) {
      throw new FeatureInputException(
          "writeParquet writes outputCol as an array, not a vector: set outputType to"
              + " array<float> or array<double>, or use transform and Spark's writer");
    }
    Dataset<Row> encoded =
        InvalidStrings.valid(in, p, $(handleInvalid())).select(InputColumns.cols(p.inputColumns()));
    p.layout = layout(encoded.schema(), p);
    return GpuPartitions.write(encoded, new FeatureKernel(p), output, report);
  }

  /** The input's columns that would pass through {@link #transform} unchanged. */
  public List<String> passesThrough(Dataset<?> dataset) {
    @SuppressWarnings("unchecked")
    Dataset<Row> in = (Dataset<Row>) dataset;
    return FeatureTransform.passedThroughNames(in.schema(), plan);
  }

  @Override
  public StructType transformSchema(StructType schema) {
    FeaturePlan p = applied(schema);
    return FeatureVectors.schema(layout(schema, p), p, type());
  }

  /** The plan for an input of {@code schema}, with this model's handleInvalid. */
  private FeaturePlan applied(StructType schema) {
    FeaturePlan p = plan.forInput(schema);
    p.keepInvalid = $(handleInvalid()).equals("keep");
    return p;
  }

  /** Where {@link #transform} puts each column over an input of {@code schema}, by the params. */
  private FeatureLayout layout(StructType schema, FeaturePlan p) {
    return FeatureLayout.of(schema, p, (Boolean) $(keepInputs()), $(outputCol()), type());
  }

  private String type() {
    return $(outputType());
  }

  @Override
  public String explainParam(Param<?> param) {
    return EncoderParams.explain(this, param);
  }

  @Override
  public FeatureEncoderModel copy(ParamMap extra) {
    FeatureEncoderModel copied = new FeatureEncoderModel(uid, plan);
    return copyValues(copied, extra).setParent(parent());
  }

  // ---- saved and loaded ---------------------------------------------------------------------

  /** Saves the params and the fitted statistics, in Spark ML's layout. */
  @Override
  public MLWriter write() {
    return new ModelFiles.Writer(this);
  }

  public static MLReader<FeatureEncoderModel> read() {
    return new ModelReader<>(FeatureEncoderModel.class);
  }

  public static FeatureEncoderModel load(String path) {
    return read().load(path);
  }
}
