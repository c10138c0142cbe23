package dev.overlap.jobs.features;

import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.api.Written;
import dev.overlap.features.FeatureEncoder;
import dev.overlap.features.FeatureEncoderModel;
import dev.overlap.features.FeatureInputException;
import dev.overlap.jobs.cli.JobSummary;
import dev.overlap.jobs.cli.PhaseProgress;
import dev.overlap.jobs.cli.UsageException;
import dev.overlap.jobs.delta.JobInput;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The features job: a {@link FeatureEncoder} fitted on a Parquet input and applied to the same
 * input, its output written as Parquet (encoded on the GPU when every input column is encoded and
 * no Spark ML vector is asked for). By default the features and the columns the encoder does not
 * encode; {@link OutputOptions} keeps every input column or writes the features as one column. What
 * each column type gets, and how NaN, infinities, nulls and names are treated: {@link
 * FeatureEncoder}. The summary says which first pass ran, how many non-finite values were treated
 * as missing, and how many features were made.
 */
public final class FeaturesJob {
  private static final Logger LOG = LoggerFactory.getLogger("dev.overlap");

  private FeaturesJob() {}

  /** The rows written, and the model that made them (fitted, or loaded). */
  public record Result(long rows, FeatureEncoderModel model) {}

  /**
   * Fits a {@link FeatureEncoder} on {@code input} (Parquet, or a Delta table), or applies the
   * saved model {@code options} names, and writes its features of the same data to {@code output};
   * the caller saves a fitted model ({@link #save}) once the output is in place.
   */
  public static Result run(
      SparkSession spark,
      JobInput input,
      String output,
      int vocab,
      ModelOptions options,
      OutputOptions outputs,
      JobSummary summary) {
    PipelineReport report = PipelineReport.create(spark);
    Dataset<Row> in = read(spark, input, summary);
    if (options.load() == null) { // the schema suffices: before the first pass
      try {
        outputs.checkAgainst(in.schema(), new FeatureEncoder().columnsToEncode(in.schema()));
      } catch (FeatureInputException e) {
        throw new UsageException(e.getMessage(), e);
      }
    }
    FeatureEncoderModel model = model(spark, in, vocab, options, summary);
    outputs.checkAgainst(in.schema(), model.encodedColumns());
    model
        .setKeepInputs(outputs.keepInputs())
        .setOutputCol(outputs.vectorCol() == null ? "" : outputs.vectorCol())
        .setOutputType(outputs.vectorType());
    outsideTheVector(model, outputs, summary);
    try (PhaseProgress p = PhaseProgress.start(spark, "features second pass")) {
      return new Result(write(spark, in, output, model, summary, report), model);
    } catch (FeatureInputException e) { // a saved model's columns the input lacks, say
      throw new UsageException(e.getMessage(), e);
    }
  }

  /** The second pass: the model's features of {@code in} written to {@code output}; its rows. */
  private static long write(
      SparkSession spark,
      Dataset<Row> in,
      String output,
      FeatureEncoderModel model,
      JobSummary summary,
      PipelineReport report) {
    long start = System.nanoTime();
    boolean vector =
        !model.getOrDefault(model.outputCol()).isEmpty()
            && model.getOrDefault(model.outputType()).equals("vector");
    if (model.passesThrough(in).isEmpty() && !vector) {
      // The kernel's output is written as Parquet by the pipeline: encoded on the GPU, or by the
      // CPU implementation and Spark's writer on an executor without one.
      Written w = model.writeParquet(in, ParquetOutput.to(output), report);
      secondPass(
          summary,
          start,
          report,
          (w.gpuTasks() > 0
                  ? "its output encoded as Parquet on the GPU, only the file bytes copied back"
                  : "its CPU implementation, Parquet written by Spark")
              + String.format(Locale.ROOT, " (%d files, %.1f MB)", w.files(), w.bytes() / 1e6));
      return w.rows();
    }
    model.transformWithReport(in, report).write().mode("overwrite").parquet(output);
    secondPass(
        summary,
        start,
        report,
        "its results back as rows"
            + (vector ? ", the features as one vector" : ", with the columns passed through")
            + ", Parquet written by Spark");
    return spark.read().parquet(output).count();
  }

  /** The second pass in the summary: its time since {@code start}, how it wrote, its figures. */
  private static void secondPass(
      JobSummary summary, long start, PipelineReport report, String written) {
    summary.phase(
        "features",
        System.nanoTime() - start,
        "second pass and write: the features kernel, " + written);
    summary.add("features", report);
    summary.rowsIn(report.rowsIn()); // the second pass reads every row once
  }

  /** Fits a model and saves it, writing no features; returns the rows it was fitted on. */
  public static long fitOnly(
      SparkSession spark, JobInput input, int vocab, ModelOptions options, JobSummary summary) {
    FeatureEncoderModel model = model(spark, read(spark, input, summary), vocab, options, summary);
    save(model, options, summary);
    return model.fittedRows();
  }

  private static Dataset<Row> read(SparkSession spark, JobInput input, JobSummary summary) {
    Dataset<Row> in;
    try {
      in = input.read(spark, summary);
    } catch (Exception e) { // AnalysisException, which Java sees as checked
      if (!(e instanceof AnalysisException a)
          || !"COLUMN_ALREADY_EXISTS".equals(a.getCondition())) {
        throw e;
      }
      String named = a.getMessageParameters().get("columnName");
      throw new UsageException(
          "input '"
              + input.path()
              + "' has columns whose names differ only in case"
              + (named == null ? "" : " (" + named + ")")
              + ", and Spark resolves names ignoring case: rename one, or pass"
              + " --conf spark.sql.caseSensitive=true",
          e);
    }
    return in;
  }

  /** The saved model {@code --model} names, or one fitted on {@code in}; said in the summary. */
  private static FeatureEncoderModel model(
      SparkSession spark, Dataset<Row> in, int vocab, ModelOptions options, JobSummary summary) {
    if (options.load() != null) {
      long start = System.nanoTime();
      FeatureEncoderModel model;
      try {
        // The job keeps a string outside the vocabulary (index N), whatever the model was saved
        // with.
        model = FeatureEncoderModel.load(options.load()).setHandleInvalid("keep");
      } catch (IllegalArgumentException e) {
        throw new UsageException("--model '" + options.load() + "': " + e.getMessage(), e);
      }
      summary.phase("load model", System.nanoTime() - start, "loaded from " + options.load());
      summary.note("model", fitted(model));
      describe(model, summary);
      return model;
    }
    long start = System.nanoTime();
    PipelineReport first = PipelineReport.create(spark);
    PipelineReport counts = PipelineReport.create(spark);
    FeatureEncoderModel model;
    try (PhaseProgress p = PhaseProgress.start(spark, "features first pass")) {
      model = new FeatureEncoder().setVocabularySize(vocab).fitWithReports(in, first, counts);
    } catch (FeatureInputException e) {
      throw new UsageException(e.getMessage(), e);
    }
    if (model.fittedByKernels()) {
      summary.add("first pass", first);
      summary.add("exact counts", counts);
      List<String> onSpark = model.vocabulariesFromSpark();
      summary.phase(
          "first pass",
          System.nanoTime() - start,
          "statistics and vocabularies: partial aggregates per batch, merged on the driver"
              + (onSpark.isEmpty() ? "" : "; vocabularies from Spark for " + onSpark));
    } else {
      summary.phase(
          "first pass", System.nanoTime() - start, "statistics and vocabularies, on Spark alone");
    }
    if (model.nonFiniteValues() > 0) {
      summary.note(
          "non-finite",
          model.nonFiniteValues()
              + " values in "
              + String.join(", ", model.nonFiniteColumns())
              + " treated as missing");
    }
    describe(model, summary);
    return model;
  }

  private static void describe(FeatureEncoderModel model, JobSummary summary) {
    int made = 0;
    for (String c : model.encodedColumns()) {
      List<String> features = model.features(c);
      made += features.size();
      LOG.info("features: {} -> {}", c, String.join(", ", features));
    }
    List<String> leftOut = model.leftOutColumns();
    summary.note(
        "encoded",
        model.encodedColumns().length
            + " columns ("
            + shown(List.of(model.encodedColumns()))
            + ") into "
            + made
            + " features (the run's log lists them per column)"
            + (leftOut.isEmpty() ? "" : "; left out: " + String.join(", ", leftOut)));
  }

  /**
   * With {@code --vector-col}, the features its column does not hold, named in the summary: the
   * imputed strings, dates and timestamps, which a vector cannot hold, and the imputed numbers,
   * whose {@code _std} it holds.
   */
  private static void outsideTheVector(
      FeatureEncoderModel model, OutputOptions outputs, JobSummary summary) {
    if (outputs.vectorCol() == null) {
      return;
    }
    List<String> outside = new java.util.ArrayList<>(model.featureNames());
    outside.removeAll(model.vectorFeatures());
    summary.note(
        "vector",
        "--vector-col '"
            + outputs.vectorCol()
            + "' holds "
            + model.vectorFeatures().size()
            + " of the "
            + model.featureNames().size()
            + " features"
            + (outside.isEmpty()
                ? ""
                : "; not in it: "
                    + shown(outside)
                    + " (imputed strings, dates and timestamps, which a vector cannot hold, and"
                    + " imputed numbers, whose _std it holds); without --vector-col each is a"
                    + " column"));
  }

  /** Names, the first 10 of them and a count of the others. */
  private static String shown(List<String> names) {
    return names.size() <= 10
        ? String.join(", ", names)
        : String.join(", ", names.subList(0, 10)) + " and " + (names.size() - 10) + " more";
  }

  private static String fitted(FeatureEncoderModel model) {
    return "fitted on "
        + model.fittedOn()
        + ", "
        + String.format(Locale.ROOT, "%,d", model.fittedRows())
        + " rows, at "
        + java.time.Instant.ofEpochMilli(model.fittedAt())
            .truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
  }

  /** Saves the fitted model where {@code --save-model} says, replacing only a model (checked). */
  public static void save(FeatureEncoderModel model, ModelOptions options, JobSummary summary) {
    if (options.save() == null || options.load() != null) {
      return;
    }
    long start = System.nanoTime();
    try {
      (options.overwrite() ? model.write().overwrite() : model.write()).save(options.save());
    } catch (java.io.IOException e) {
      throw new UsageException("--save-model '" + options.save() + "': " + e.getMessage(), e);
    }
    summary.phase("save model", System.nanoTime() - start, "to " + options.save());
    summary.note("model", fitted(model));
  }
}
