package dev.overlap.features;

import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.api.Written;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.feature.Imputer;
import org.apache.spark.ml.feature.ImputerModel;
import org.apache.spark.ml.feature.SQLTransformer;
import org.apache.spark.ml.feature.StandardScaler;
import org.apache.spark.ml.feature.StandardScalerModel;
import org.apache.spark.ml.feature.StringIndexer;
import org.apache.spark.ml.feature.StringIndexerModel;
import org.apache.spark.ml.feature.VectorAssembler;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;

/**
 * The feature encoder against Spark ML's own pipeline doing the same work on the same Parquet
 * input, in one process: fit, then transform and write. Spark ML's side: a {@code StringIndexer}
 * per string column ({@code frequencyDesc}), an {@code Imputer} (mean) over the numbers, a {@code
 * VectorAssembler} and a {@code StandardScaler} (mean and deviation), the dates' day of week and
 * month by a {@code SQLTransformer}. Columns named in {@code skip} are left out of both (a
 * free-text column, whose full {@code StringIndexer} vocabulary is not the encoder's top N). After
 * the timed rounds it compares the fitted statistics: means and deviations with {@code
 * StandardScaler}'s, imputed values with {@code Imputer}'s, vocabularies with the first labels of
 * {@code StringIndexer}'s.
 *
 * <pre>
 *   EncoderBenchmark INPUT OUTPUT_DIR ROUNDS [SKIP,...]
 * </pre>
 *
 * <p>Each round then writes one column of every numeric feature three ways ({@code vectors}): the
 * encoder's {@code outputCol} vector, the encoder's columns through {@code VectorAssembler}, and an
 * {@code array<float>} encoded on the GPU. Each round's outputs under {@code OUTPUT_DIR} are
 * deleted once the round is timed.
 */
public final class EncoderBenchmark {
  private EncoderBenchmark() {}

  public static void main(String[] args) throws Exception {
    String input = args[0];
    String out = args[1];
    int rounds = Integer.parseInt(args[2]);
    List<String> skip = args.length > 3 ? List.of(args[3].split(",")) : List.of();
    SparkSession spark = TestSessions.withPlugin("local[*]");
    Dataset<Row> in = spark.read().parquet(input);
    List<String> numbers = new ArrayList<>();
    List<String> strings = new ArrayList<>();
    List<String> dates = new ArrayList<>();
    for (StructField f : in.schema().fields()) {
      DataType t = f.dataType();
      if (skip.contains(f.name())) {
        continue;
      }
      if (t instanceof NumericType) {
        numbers.add(f.name());
      } else if (t instanceof StringType) {
        strings.add(f.name());
      } else if (t instanceof DateType) {
        dates.add(f.name());
      }
    }
    List<String> all = new ArrayList<>(numbers);
    all.addAll(strings);
    all.addAll(dates);
    Dataset<Row> used =
        in.select(
            all.stream()
                .map(org.apache.spark.sql.functions::col)
                .toArray(org.apache.spark.sql.Column[]::new));
    System.out.println("columns: numbers " + numbers + ", strings " + strings + ", dates " + dates);
    FeatureEncoderModel model = null;
    PipelineModel ml = null;
    for (int round = 1; round <= rounds; round++) {
      Path ours = Path.of(out, "overlap-" + round);
      Path theirs = Path.of(out, "spark-ml-" + round);
      // Both outputs are deleted once timed, or once the round failed: nothing reads them.
      try {
        long t0 = System.nanoTime();
        PipelineReport first = PipelineReport.create(spark);
        model = new FeatureEncoder().fitWithReports(used, first, first);
        long t1 = System.nanoTime();
        PipelineReport report = PipelineReport.create(spark);
        Written w = model.writeParquet(used, ParquetOutput.to(ours.toString()), report);
        long t2 = System.nanoTime();
        ml = sparkMl(numbers, strings, dates).fit(used);
        long t3 = System.nanoTime();
        ml.transform(used).write().mode(SaveMode.Overwrite).parquet(theirs.toString());
        long t4 = System.nanoTime();
        System.out.printf(
            Locale.ROOT,
            "round %d: overlap fit %.2f s (kernels %s, GPU tasks %d), transform+write %.2f s (%d rows,"
                + " GPU tasks %d); spark-ml fit %.2f s, transform+write %.2f s; ratios fit %.2fx,"
                + " transform+write %.2fx%n",
            round,
            (t1 - t0) / 1e9,
            model.fittedByKernels(),
            first.gpuTasks(),
            (t2 - t1) / 1e9,
            w.rows(),
            report.gpuTasks(),
            (t3 - t2) / 1e9,
            (t4 - t3) / 1e9,
            (double) (t3 - t2) / (t1 - t0),
            (double) (t4 - t3) / (t2 - t1));
        vectors(spark, model, used, Path.of(out, "vectors-" + round), round);
      } finally {
        delete(ours);
        delete(theirs);
      }
    }
    compare(model, ml, numbers, strings);
    spark.stop();
  }

  /**
   * One column of every numeric feature, written as Parquet: the encoder's {@code outputCol} as a
   * vector, against the encoder's columns and Spark ML's {@code VectorAssembler} over them; and as
   * an {@code array<float>} built and encoded on the GPU ({@code writeParquet}).
   */
  private static void vectors(
      SparkSession spark, FeatureEncoderModel model, Dataset<Row> in, Path dir, int round)
      throws IOException {
    FeatureEncoderModel columns =
        model.copy(new org.apache.spark.ml.param.ParamMap()).setKeepInputs(false).setOutputCol("");
    FeatureEncoderModel vector = columns.copy(new org.apache.spark.ml.param.ParamMap());
    vector.setOutputCol("features");
    try {
      long t0 = System.nanoTime();
      vector.transform(in).write().parquet(dir.resolve("vector").toString());
      long t1 = System.nanoTime();
      new VectorAssembler()
          .setInputCols(model.vectorFeatures().toArray(new String[0]))
          .setOutputCol("features")
          .setHandleInvalid("keep")
          .transform(columns.transform(in))
          .select("features")
          .write()
          .parquet(dir.resolve("assembled").toString());
      long t2 = System.nanoTime();
      PipelineReport report = PipelineReport.create(spark);
      FeatureEncoderModel floats = vector.copy(new org.apache.spark.ml.param.ParamMap());
      floats.setOutputType("array<float>");
      floats.writeParquet(in, ParquetOutput.to(dir.resolve("floats").toString()), report);
      long t3 = System.nanoTime();
      System.out.printf(
          Locale.ROOT,
          "round %d vectors (%d features): outputCol vector transform+write %.2f s; encoder +"
              + " VectorAssembler %.2f s (%.2fx); outputCol array<float> writeParquet %.2f s (GPU"
              + " tasks %d)%n",
          round,
          model.vectorFeatures().size(),
          (t1 - t0) / 1e9,
          (t2 - t1) / 1e9,
          (double) (t2 - t1) / (t1 - t0),
          (t3 - t2) / 1e9,
          report.gpuTasks());
    } finally {
      delete(dir);
    }
  }

  private static Pipeline sparkMl(List<String> numbers, List<String> strings, List<String> dates) {
    List<PipelineStage> stages = new ArrayList<>();
    StringBuilder casts = new StringBuilder("SELECT *");
    for (String n : numbers) {
      casts.append(", CAST(").append(n).append(" AS DOUBLE) AS ").append(n).append("_d");
    }
    for (String d : dates) {
      casts.append(", dayofweek(").append(d).append(") AS ").append(d).append("_dow");
      casts.append(", month(").append(d).append(") AS ").append(d).append("_month");
    }
    stages.add(new SQLTransformer().setStatement(casts + " FROM __THIS__"));
    String[] doubles = numbers.stream().map(n -> n + "_d").toArray(String[]::new);
    String[] imputed = numbers.stream().map(n -> n + "_imputed").toArray(String[]::new);
    stages.add(new Imputer().setInputCols(doubles).setOutputCols(imputed).setStrategy("mean"));
    stages.add(new VectorAssembler().setInputCols(imputed).setOutputCol("numbers"));
    stages.add(
        new StandardScaler()
            .setInputCol("numbers")
            .setOutputCol("numbers_std")
            .setWithMean(true)
            .setWithStd(true));
    for (String s : strings) {
      stages.add(
          new StringIndexer()
              .setInputCol(s)
              .setOutputCol(s + "_idx")
              .setStringOrderType("frequencyDesc")
              .setHandleInvalid("keep"));
    }
    return new Pipeline().setStages(stages.toArray(new PipelineStage[0]));
  }

  /** The fitted statistics side by side; prints the largest differences and the verdict. */
  private static void compare(
      FeatureEncoderModel model, PipelineModel ml, List<String> numbers, List<String> strings) {
    ImputerModel imputer = null;
    StandardScalerModel scaler = null;
    List<StringIndexerModel> indexers = new ArrayList<>();
    for (org.apache.spark.ml.Transformer t : ml.stages()) {
      if (t instanceof ImputerModel m) {
        imputer = m;
      } else if (t instanceof StandardScalerModel m) {
        scaler = m;
      } else if (t instanceof StringIndexerModel m) {
        indexers.add(m);
      }
    }
    Row surrogates = imputer.surrogateDF().first();
    double worstMean = 0;
    double worstStd = 0;
    for (int i = 0; i < numbers.size(); i++) {
      String n = numbers.get(i);
      worstMean = Math.max(worstMean, relative(model.mean(n), scaler.mean().apply(i)));
      worstStd = Math.max(worstStd, relative(model.std(n), scaler.std().apply(i)));
      worstMean = Math.max(worstMean, relative(model.mean(n), surrogates.getDouble(i)));
    }
    int vocabulariesEqual = 0;
    for (int i = 0; i < strings.size(); i++) {
      List<String> ours = model.vocabulary(strings.get(i));
      String[] labels = indexers.get(i).labelsArray()[0];
      List<String> theirs = List.of(labels).subList(0, Math.min(labels.length, ours.size()));
      vocabulariesEqual += ours.equals(theirs) ? 1 : 0;
      if (!ours.equals(theirs)) {
        System.out.println("vocabulary of " + strings.get(i) + ": " + ours + " against " + theirs);
      }
    }
    boolean equal = worstMean < 1e-9 && worstStd < 1e-9 && vocabulariesEqual == strings.size();
    System.out.printf(
        Locale.ROOT,
        "%s: means (StandardScaler and Imputer) within %.1e, deviations within %.1e, %d of %d"
            + " vocabularies equal to StringIndexer's first labels%n",
        equal ? "EQUAL" : "DIFFERENT",
        worstMean,
        worstStd,
        vocabulariesEqual,
        strings.size());
  }

  /** Deletes {@code dir} and everything under it, if it exists; says what it freed. */
  public static void delete(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    long bytes = 0;
    List<Path> all;
    try (Stream<Path> s = Files.walk(dir)) {
      all = s.sorted(Comparator.reverseOrder()).toList();
    }
    for (Path p : all) {
      bytes += Files.isRegularFile(p) ? Files.size(p) : 0;
      Files.delete(p);
    }
    System.out.printf(Locale.ROOT, "deleted %s (%.1f MB)%n", dir, bytes / 1e6);
  }

  private static double relative(double a, double b) {
    return Math.abs(a - b) / Math.max(1e-300, Math.max(Math.abs(a), Math.abs(b)));
  }
}
