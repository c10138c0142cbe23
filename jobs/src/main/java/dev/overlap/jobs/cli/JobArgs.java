package dev.overlap.jobs.cli;

import dev.overlap.jobs.etl.EtlJob;
import dev.overlap.jobs.tpch.TpchGenerate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.commons.text.similarity.LevenshteinDistance;

/**
 * A job's command line, checked strictly: every option belongs to the job, is given once, and has a
 * value that does not look like an option; numbers are in range. Every mistake is a {@link
 * UsageException} whose message names the option and what it accepts.
 */
public final class JobArgs {
  static final List<String> JOBS = List.of("generate", "etl", "features");

  /** features' options that take a value, in the order usage lists them. */
  private static final String FEATURES =
      "--input --format --version --output --vocabulary --model --save-model --vector-col"
          + " --vector-type";

  /** Options that take a value, per job, in the order usage lists them. */
  private static final Map<String, List<String>> VALUES =
      Map.of(
          "generate", List.of("--scale", "--output"),
          "etl", List.of("--input", "--format", "--version", "--output", "--engine", "--repeat"),
          "features", List.of(FEATURES.split(" ")));

  /** Flags of one job only. */
  private static final Map<String, List<String>> JOB_FLAGS =
      Map.of(
          "generate", List.of(),
          "etl", List.of(),
          "features", List.of("--fit-only", "--keep-inputs"));

  /** Flags every job takes. */
  public static final String OVERWRITE = "--overwrite";

  static final String OVERWRITE_UNMARKED = "--overwrite-unmarked";
  private static final List<String> FLAGS = List.of(OVERWRITE, OVERWRITE_UNMARKED);

  /** The largest TPC-H scale factor the generator defines. */
  static final double MAX_SCALE = 100_000;

  static final int MAX_VOCABULARY = 100_000;

  /** etl's engines ({@code --engine}), the default first. */
  static final List<String> ENGINES = List.of(EtlJob.OVERLAP, EtlJob.SPARK_SQL);

  public final String job;
  private final Map<String, String> options;

  private JobArgs(String job, Map<String, String> options) {
    this.job = job;
    this.options = options;
  }

  public static JobArgs parse(String... args) {
    if (args.length == 0) {
      throw new UsageException("no job given; jobs: " + String.join(", ", JOBS));
    }
    String job = args[0];
    if (!JOBS.contains(job)) {
      throw new UsageException(
          "unknown job '" + job + "'; jobs: " + String.join(", ", JOBS) + " (see --help)");
    }
    List<String> values = VALUES.get(job);
    Map<String, String> opts = new LinkedHashMap<>();
    for (int i = 1; i < args.length; i++) {
      String a = args[i];
      boolean flag = FLAGS.contains(a) || JOB_FLAGS.get(job).contains(a);
      if (!flag && !values.contains(a)) {
        throw new UsageException(unknown(job, a));
      }
      if (opts.containsKey(a)) {
        throw new UsageException(a + " is given twice; give it once");
      }
      if (flag) {
        opts.put(a, "true");
        continue;
      }
      if (i + 1 >= args.length) {
        throw new UsageException(a + " needs a value" + example(a));
      }
      String v = args[++i];
      if (v.startsWith("--")) {
        throw new UsageException(
            a + " needs a value, but the next argument is the option '" + v + "'" + example(a));
      }
      if (v.isBlank()) {
        throw new UsageException(a + " needs a value, got an empty one" + example(a));
      }
      opts.put(a, v);
    }
    JobArgs parsed = new JobArgs(job, opts);
    if (job.equals("generate")) {
      if (!opts.containsKey("--scale")) {
        throw new UsageException("generate needs --scale, e.g. --scale 1");
      }
      parsed.scale();
    }
    if (opts.containsKey("--vocabulary")) {
      parsed.vocabulary();
    }
    if (opts.containsKey("--engine")) {
      parsed.engine();
    }
    if (opts.containsKey("--repeat")) {
      parsed.repeat();
    }
    parsed.checkModelOptions();
    JobInput.check(parsed);
    return parsed;
  }

  private static String unknown(String job, String a) {
    String takes = job + " takes " + String.join(", ", takes(job));
    if (!a.startsWith("-")) {
      return "unexpected argument '" + a + "' (is it the value of an option?); " + takes;
    }
    for (Map.Entry<String, List<String>> e : VALUES.entrySet()) {
      if (e.getValue().contains(a)) {
        return a + " is not an option of " + job + " (it is one of " + e.getKey() + "); " + takes;
      }
    }
    String near = nearest(a, takes(job));
    return "unknown option '"
        + a
        + "' for "
        + job
        + (near == null ? "; " : "; did you mean " + near + "? ")
        + takes;
  }

  static List<String> takes(String job) {
    List<String> all = new ArrayList<>(VALUES.get(job));
    all.addAll(JOB_FLAGS.get(job));
    all.addAll(FLAGS);
    return all;
  }

  /** features' model options: which go together, refused before any work otherwise. */
  private void checkModelOptions() {
    if (has("--fit-only") && !has("--save-model")) {
      throw new UsageException(
          "--fit-only fits a model and writes no features: give --save-model DIR for the model");
    }
    if (has("--fit-only") && has("--output")) {
      throw new UsageException("--fit-only writes no features: drop --output, or drop --fit-only");
    }
    if (has("--model") && (has("--save-model") || has("--fit-only"))) {
      throw new UsageException(
          "--model applies a saved model and fits none: drop --save-model and --fit-only, or"
              + " drop --model to fit one");
    }
    if (has("--model") && has("--vocabulary")) {
      throw new UsageException(
          "--model applies a saved model, whose vocabularies were fixed when it was fitted: drop"
              + " --vocabulary");
    }
  }

  /** An example value of each option, for the line that says it is missing. */
  private static final Map<String, String> EXAMPLES =
      Map.of(
          "--scale", "--scale 1",
          "--vocabulary", "--vocabulary 20",
          "--input", "--input data/tpch-sf1/lineitem",
          "--engine", "--engine spark-sql",
          "--repeat", "--repeat 3",
          "--format", "--format delta",
          "--version", "--version 0",
          "--vector-col", "--vector-col features",
          "--model", "--model models/features",
          "--save-model", "--save-model models/features");

  private static String example(String option) {
    return ", e.g. " + EXAMPLES.getOrDefault(option, "--output out/result");
  }

  public Optional<String> get(String option) {
    return Optional.ofNullable(options.get(option));
  }

  public boolean has(String option) {
    return options.containsKey(option);
  }

  /** {@code --scale}: a TPC-H scale factor, greater than 0 and at most {@value #MAX_SCALE}. */
  public double scale() {
    String v = options.get("--scale");
    double sf;
    try {
      sf = Double.parseDouble(v);
    } catch (NumberFormatException e) {
      sf = Double.NaN;
    }
    if (!(sf > 0 && sf <= MAX_SCALE)) {
      throw new UsageException(
          String.format(
              Locale.ROOT,
              "--scale must be a number greater than 0 and at most %.0f (e.g. 0.01, 1, 10), got '%s'",
              MAX_SCALE,
              v));
    }
    if (TpchGenerate.orderCount(sf, TpchGenerate.parts(sf)) == 0) {
      throw new UsageException(
          "--scale "
              + v
              + " gives tables of 0 rows; the smallest scale that gives rows is "
              + smallestScale()
              + " (SF 0.01 gives 15000 orders)");
    }
    return sf;
  }

  /** The smallest scale factor of one significant digit for which generate writes rows. */
  static String smallestScale() {
    for (int k = 12; k >= 0; k--) {
      for (int m = 1; m <= 9; m++) {
        java.math.BigDecimal sf = java.math.BigDecimal.valueOf(m).scaleByPowerOfTen(-k);
        double d = sf.doubleValue();
        if (TpchGenerate.orderCount(d, TpchGenerate.parts(d)) > 0) {
          return sf.toPlainString();
        }
      }
    }
    return "1";
  }

  /** {@code --vocabulary}: a whole number from 1 to {@value #MAX_VOCABULARY}; 20 by default. */
  public int vocabulary() {
    String v = options.getOrDefault("--vocabulary", "20");
    try {
      int n = Integer.parseInt(v.trim());
      if (n >= 1 && n <= MAX_VOCABULARY) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new UsageException(
        "--vocabulary must be a whole number from 1 to " + MAX_VOCABULARY + ", got '" + v + "'");
  }

  /** {@code --repeat}: a whole number from 1 to 100; 1 by default. */
  public int repeat() {
    String v = options.getOrDefault("--repeat", "1");
    try {
      int n = Integer.parseInt(v.trim());
      if (n >= 1 && n <= 100) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new UsageException("--repeat must be a whole number from 1 to 100, got '" + v + "'");
  }

  /**
   * {@code --engine}: what runs etl's queries, {@code overlap} (Overlap's kernels, the default) or
   * {@code spark-sql} (Spark SQL's own aggregations).
   */
  public String engine() {
    String v = options.getOrDefault("--engine", ENGINES.get(0));
    if (ENGINES.contains(v)) {
      return v;
    }
    String near = nearest(v, ENGINES);
    throw new UsageException(
        "--engine must be "
            + String.join(" or ", ENGINES)
            + ", got '"
            + v
            + "'"
            + (near == null ? "" : "; did you mean " + near + "?"));
  }

  /** The closest of {@code candidates} to {@code word} by edit distance, if it is close. */
  static String nearest(String word, List<String> candidates) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String c : candidates) {
      int d = LevenshteinDistance.getDefaultInstance().apply(word, c);
      if (d < bestDistance) {
        best = c;
        bestDistance = d;
      }
    }
    return bestDistance <= Math.max(2, word.length() / 3) ? best : null;
  }
}
