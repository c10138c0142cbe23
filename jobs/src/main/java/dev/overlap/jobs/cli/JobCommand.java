package dev.overlap.jobs.cli;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;

/**
 * One job as the launcher runs it: its name, its options, the checks of their values and its run.
 * Each job's package implements it; {@link JobCommands} finds them through {@link
 * java.util.ServiceLoader}, so that this package names no job. What every job shares (parsing the
 * command line, the output's checks and staged replace, the summary, the error lines) stays here.
 */
public interface JobCommand {
  /** The job's name, the command line's first word. */
  String name();

  /** The options that take a value, in the order usage lists them. */
  List<String> values();

  /** The flags of this job only; every job also takes {@code --overwrite} and its unmarked twin. */
  default List<String> flags() {
    return List.of();
  }

  /** An example of each of the job's own options, for the line that says one lacks its value. */
  default Map<String, String> examples() {
    return Map.of();
  }

  /**
   * Checks the values of the job's own options once its command line is parsed, before any other
   * check; a {@link UsageException} for each mistake.
   */
  default void check(JobArgs a) {}

  /** Whether the job reads {@code --input} (without it, the embedded default data). */
  default boolean readsInput() {
    return true;
  }

  /** The output folder without {@code --output}: {@code out/<job>}. */
  default String defaultOutput(JobArgs a) {
    return "out/" + name();
  }

  /** Whether this command line writes an output folder. */
  default boolean writesOutput(JobArgs a) {
    return true;
  }

  /**
   * Before Spark starts, once the output is checked ({@link PreFlight#output}): what only this job
   * checks, and the run that follows.
   *
   * @param output the checked output folder, or null when the command line writes none
   */
  Run prepare(JobArgs a, JobPaths paths, String output) throws IOException;

  /** A job's run, once its Spark session is up. */
  interface Run {
    /**
     * Runs the job over {@code input} (the given {@code --input}, the default data's {@code
     * lineitem}, or null for a job that reads none) into {@code to}, the output's staging folder
     * (null when it writes none); returns the rows it wrote, or fitted on.
     */
    long run(SparkSession spark, String input, String to, JobSummary summary) throws IOException;

    /** After the output is in place: what goes with it (features' model). */
    default void committed(JobSummary summary) throws IOException {}

    /** What the run did, after the job's name on its last line: {@code wrote <output>}. */
    default String done(String output) {
      return "wrote " + output;
    }
  }
}
