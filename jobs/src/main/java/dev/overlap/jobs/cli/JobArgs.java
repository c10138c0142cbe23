package dev.overlap.jobs.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.commons.text.similarity.LevenshteinDistance;

/**
 * A job's command line, checked strictly: every option belongs to the job ({@link JobCommand}), is
 * given once, and has a value that does not look like an option; numbers are in range. Every
 * mistake is a {@link UsageException} whose message names the option and what it accepts.
 */
public final class JobArgs {
  /** Flags every job takes. */
  public static final String OVERWRITE = "--overwrite";

  static final String OVERWRITE_UNMARKED = "--overwrite-unmarked";
  private static final List<String> FLAGS = List.of(OVERWRITE, OVERWRITE_UNMARKED);

  public final String job;
  private final Map<String, String> options;

  private JobArgs(String job, Map<String, String> options) {
    this.job = job;
    this.options = options;
  }

  public static JobArgs parse(String... args) {
    String jobs = String.join(", ", JobCommands.names());
    if (args.length == 0) {
      throw new UsageException("no job given; jobs: " + jobs);
    }
    String job = args[0];
    JobCommand command = JobCommands.named(job);
    if (command == null) {
      throw new UsageException("unknown job '" + job + "'; jobs: " + jobs + " (see --help)");
    }
    Map<String, String> opts = new LinkedHashMap<>();
    for (int i = 1; i < args.length; i++) {
      String a = args[i];
      boolean flag = FLAGS.contains(a) || command.flags().contains(a);
      if (!flag && !command.values().contains(a)) {
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
        throw new UsageException(a + " needs a value" + example(command, a));
      }
      String v = args[++i];
      if (v.startsWith("--")) {
        throw new UsageException(
            a
                + " needs a value, but the next argument is the option '"
                + v
                + "'"
                + example(command, a));
      }
      if (v.isBlank()) {
        throw new UsageException(a + " needs a value, got an empty one" + example(command, a));
      }
      opts.put(a, v);
    }
    JobArgs parsed = new JobArgs(job, opts);
    command.check(parsed);
    InputFormat.check(parsed);
    return parsed;
  }

  private static String unknown(String job, String a) {
    String takes = job + " takes " + String.join(", ", takes(job));
    if (!a.startsWith("-")) {
      return "unexpected argument '" + a + "' (is it the value of an option?); " + takes;
    }
    for (JobCommand other : JobCommands.all()) {
      if (other.values().contains(a)) {
        return a + " is not an option of " + job + " (it is one of " + other.name() + "); " + takes;
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
    JobCommand command = JobCommands.named(job);
    List<String> all = new ArrayList<>(command.values());
    all.addAll(command.flags());
    all.addAll(FLAGS);
    return all;
  }

  /**
   * An example value of the options every reading job takes, for the line that says it is missing.
   */
  private static final Map<String, String> EXAMPLES =
      Map.of(
          "--input", "--input data/tpch-sf1/lineitem",
          "--format", "--format delta",
          "--version", "--version 0");

  private static String example(JobCommand command, String option) {
    String e = EXAMPLES.getOrDefault(option, command.examples().get(option));
    return ", e.g. " + (e == null ? "--output out/result" : e);
  }

  public Optional<String> get(String option) {
    return Optional.ofNullable(options.get(option));
  }

  public boolean has(String option) {
    return options.containsKey(option);
  }

  /**
   * {@code option}'s value, a whole number from {@code min} to {@code max}; {@code orElse} when it
   * is not given.
   */
  public int wholeNumber(String option, int orElse, int min, int max) {
    String v = options.getOrDefault(option, String.valueOf(orElse));
    try {
      int n = Integer.parseInt(v.trim());
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new UsageException(
        option + " must be a whole number from " + min + " to " + max + ", got '" + v + "'");
  }

  /** {@code option}'s value, one of {@code choices}; the first of them when it is not given. */
  public String oneOf(String option, List<String> choices) {
    String v = options.getOrDefault(option, choices.get(0));
    if (choices.contains(v)) {
      return v;
    }
    String near = nearest(v, choices);
    throw new UsageException(
        option
            + " must be "
            + String.join(" or ", choices)
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
