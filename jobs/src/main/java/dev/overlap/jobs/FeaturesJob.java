package dev.overlap.jobs;

import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.api.Written;
import dev.overlap.features.FeatureEncoder;
import dev.overlap.features.FeatureEncoderModel;
import dev.overlap.features.FeatureInputException;
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
 * input, its output written as Parquet (encoded on the GPU when every input column is encoded).
 * What each column type gets, and how NaN, infinities, nulls and names are treated: {@link
 * FeatureEncoder}. The summary says which first pass ran, how many non-finite values were treated
 * as missing, and how many features were made.
 */
public final class FeaturesJob {
  private static final Logger LOG = LoggerFactory.getLogger("dev.overlap");

  private FeaturesJob() {}

  /**
   * Fits a {@link FeatureEncoder} on {@code input}'s Parquet and writes its features of the same
   * data to {@code output}; returns the rows written. Public for the tests of other packages.
   */
  public static long run(
      SparkSession spark, String input, String output, int vocab, JobSummary summary) {
    PipelineReport report = PipelineReport.create(spark);
    Dataset<Row> in;
    try {
      in = spark.read().parquet(input);
    } catch (Exception e) { // AnalysisException, which Java sees as checked
      if (!(e instanceof AnalysisException a)
          || !"COLUMN_ALREADY_EXISTS".equals(a.getCondition())) {
        throw e;
      }
      String named = a.getMessageParameters().get("columnName");
      throw new UsageException(
          "input '"
              + input
              + "' has columns whose names differ only in case"
              + (named == null ? "" : " (" + named + ")")
              + ", and Spark resolves names ignoring case: rename one, or pass"
              + " --conf spark.sql.caseSensitive=true",
          e);
    }
    long start = System.nanoTime();
    PipelineReport first = PipelineReport.create(spark);
    PipelineReport counts = PipelineReport.create(spark);
    FeatureEncoderModel model;
    try {
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
    int made = 0;
    for (String c : model.encodedColumns()) {
      List<String> features = model.features(c);
      made += features.size();
      LOG.info("features: {} -> {}", c, String.join(", ", features));
    }
    summary.note(
        "encoded",
        model.encodedColumns().length
            + " columns into "
            + made
            + " features (the run's log lists them per column)");
    start = System.nanoTime();
    if (model.passesThrough(in).isEmpty()) {
      // The kernel's output is written as Parquet by the pipeline: encoded on the GPU, or by the
      // CPU implementation and Spark's writer on an executor without one.
      Written w = model.writeParquet(in, ParquetOutput.to(output), report);
      summary.phase(
          "features",
          System.nanoTime() - start,
          "second pass and write: the features kernel, "
              + (w.gpuTasks() > 0
                  ? "its output encoded as Parquet on the GPU, only the file bytes copied back"
                  : "its CPU implementation, Parquet written by Spark")
              + String.format(Locale.ROOT, " (%d files, %.1f MB)", w.files(), w.bytes() / 1e6));
      summary.add("features", report);
      summary.rowsIn(report.rowsIn()); // the second pass reads every row once
      return w.rows();
    }
    Dataset<Row> out = model.transformWithReport(in, report);
    out.write().mode("overwrite").parquet(output);
    summary.phase(
        "features",
        System.nanoTime() - start,
        "second pass and write: the features kernel, its results back as rows and joined with the"
            + " columns passed through, Parquet written by Spark");
    summary.add("features", report);
    summary.rowsIn(report.rowsIn()); // the second pass reads every row once
    return spark.read().parquet(output).count();
  }
}
