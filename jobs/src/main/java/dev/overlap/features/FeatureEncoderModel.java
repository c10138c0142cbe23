package dev.overlap.features;

import static org.apache.spark.sql.functions.col;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.api.Public;
import dev.overlap.executor.api.Written;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.ml.Model;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.StructField;
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

  // ---- what was fitted ---------------------------------------------------------------------

  /** The encoded columns, in input order. */
  public String[] encodedColumns() {
    return plan.inputColumns();
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
    FeaturePlan p = plan.forInput(in.schema());
    return FeatureTransform.features(valid(in, p), p, report);
  }

  /**
   * The features of {@code dataset} written as Parquet with the GPU encoding them (Spark's writer
   * on executors without one); only when every input column is encoded (see {@link
   * #passesThrough}), else use {@link #transform} and Spark's writer.
   */
  public Written writeParquet(Dataset<?> dataset, ParquetOutput output, PipelineReport report) {
    @SuppressWarnings("unchecked")
    Dataset<Row> in = (Dataset<Row>) dataset;
    FeaturePlan p = plan.forInput(in.schema());
    List<String> passed = FeatureTransform.passedThroughNames(in.schema(), p);
    if (!passed.isEmpty()) {
      throw new FeatureInputException(
          "writeParquet takes only the encoded columns; these would pass through: "
              + passed
              + ". Select the encoded columns, or use transform and Spark's writer");
    }
    return GpuPartitions.write(
        valid(in, p).select(InputColumns.cols(p.inputColumns())),
        new FeatureKernel(p),
        output,
        report);
  }

  /** The input's columns that would pass through {@link #transform} unchanged. */
  public List<String> passesThrough(Dataset<?> dataset) {
    @SuppressWarnings("unchecked")
    Dataset<Row> in = (Dataset<Row>) dataset;
    return FeatureTransform.passedThroughNames(in.schema(), plan);
  }

  /** The input with the rows handleInvalid leaves out dropped, or a check that fails on them. */
  private Dataset<Row> valid(Dataset<Row> in, FeaturePlan p) {
    String mode = $(handleInvalid());
    if (mode.equals("keep")) {
      return in;
    }
    Column invalid = functions.lit(false);
    List<Column> checks = new ArrayList<>();
    for (FeaturePlan.Column c : p.columns) {
      // Only a string that gets an index can be outside the vocabulary.
      if (c.kind != FeaturePlan.Kind.STRING || !p.kindFeatures(c).contains("idx")) {
        continue;
      }
      Column x = col(InputColumns.quote(c.name));
      Column outside = x.isNotNull().and(functions.not(x.isin(c.vocabulary.toArray())));
      invalid = invalid.or(outside);
      checks.add(
          functions
              .when(
                  outside,
                  functions.raise_error(
                      functions.concat(
                          functions.lit("column '" + c.name + "' holds '"),
                          x,
                          functions.lit(
                              "', which is not in the model's vocabulary of "
                                  + c.vocabulary.size()
                                  + " values; set handleInvalid to keep or skip"))))
              .otherwise(functions.lit(true)));
    }
    if (checks.isEmpty()) {
      return in;
    }
    if (mode.equals("skip")) {
      return in.where(functions.not(invalid));
    }
    Column all = checks.get(0);
    for (Column c : checks.subList(1, checks.size())) {
      all = all.and(c);
    }
    return in.where(all);
  }

  @Override
  public StructType transformSchema(StructType schema) {
    FeaturePlan p = plan.forInput(schema);
    StructType out = p.featureOutputSchema();
    for (StructField f : FeatureTransform.passedThrough(schema, p)) {
      out = out.add(f);
    }
    return out;
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
