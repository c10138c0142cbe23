package dev.overlap.jobs.cli;

import dev.overlap.executor.config.OverlapConfigException;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.SparkThrowable;

/**
 * Turns whatever a job threw into the one line a user reads: what failed, naming the file, column,
 * key or host at fault, and what to do. The full exception goes to the log, not to the terminal.
 */
public final class ErrorLines {
  private static final String NO_SPACE = "No space left on device";

  private static final Pattern FILE =
      Pattern.compile("((?:file|hdfs|s3a?|gs|abfss?|dbfs):[^\\s'\"`\\]]+)");

  /** One line, and whether the user's input or command was at fault (exit code 2) or not (1). */
  /**
   * @param exit the process's exit code: 2 for a usage error; 52 for a task out of memory, as when
   *     Spark's own handler stops the JVM for it; 1 otherwise
   */
  public record Line(String text, boolean usage, int exit) {
    public Line(String text, boolean usage) {
      this(text, usage, usage ? 2 : 1);
    }
  }

  /**
   * The out-of-memory error a task's failure hides, or null. Spark's file scan turns an {@code
   * OutOfMemoryError} into a {@code scala.MatchError} of it (its error handler has no case for it),
   * so the task fails as any task does instead of stopping the JVM: its message names it.
   */
  public static String hiddenOutOfMemory(Throwable t) {
    for (int depth = 0; t != null && depth < 20; depth++, t = t.getCause()) {
      String m = t.getMessage();
      if (t.getClass().getName().equals("scala.MatchError")
          && m != null
          && m.startsWith("java.lang.OutOfMemoryError")) {
        int of = m.indexOf(" (of class ");
        return of > 0 ? m.substring(0, of) : m;
      }
    }
    return null;
  }

  /** What the lines may name: the output, the input's footers, Spark's master. */
  public record Context(String output, InputFooters footers, String master) {
    public static final Context NONE = new Context(null, InputFooters.NONE, "");
  }

  private ErrorLines() {}

  public static Line of(Throwable t, String job, Context context) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof UsageException) {
        return new Line(c.getMessage(), true);
      }
      if (c instanceof OverlapConfigException) {
        return new Line(c.getMessage(), true);
      }
    }
    for (Throwable c = t; c != null; c = c.getCause()) {
      Line l = known(c, job, context);
      if (l != null) {
        return l;
      }
    }
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return new Line(
        job + " failed: " + root.getClass().getSimpleName() + ": " + JobPaths.firstLine(root),
        false);
  }

  private static Line known(Throwable c, String job, Context context) {
    String hidden = hiddenOutOfMemory(c);
    if (hidden != null) {
      // A task out of memory that did not stop the JVM: the same line and exit code as one that
      // did (FatalExit). The job failed before its output was put in place.
      return new Line(
          FatalExit.outOfMemory(job, context.master(), "a task", hidden, "nothing was changed"),
          false,
          52);
    }
    String msg = c.getMessage() == null ? "" : c.getMessage();
    if (c instanceof SparkThrowable s && s.getCondition() != null) {
      String cond = s.getCondition();
      Map<String, String> params = s.getMessageParameters();
      if (cond.startsWith("FAILED_READ_FILE")
          || cond.startsWith("CANNOT_MERGE")
          || cond.startsWith("PARQUET_COLUMN_DATA_TYPE_MISMATCH")) {
        Optional<String> differ = context.footers().disagreement();
        if (differ.isPresent()) {
          return new Line(differ.get(), true);
        }
      }
      if (cond.equals("UNABLE_TO_INFER_SCHEMA")) {
        return new Line(
            "the input holds no Parquet data Spark can read (no data files, or only empty ones);"
                + " point --input at a folder of Parquet files",
            true);
      }
      if (cond.startsWith("FAILED_READ_FILE") || cond.startsWith("CANNOT_READ_FILE_FOOTER")) {
        String path = params.getOrDefault("path", fileIn(msg));
        return new Line(
            "input file '"
                + path
                + "' is not a readable Parquet file ("
                + rootLine(c)
                + "); remove it from the input or repair it",
            true);
      }
      if (cond.equals("PATH_NOT_FOUND")) {
        return new Line(
            "path not found: " + params.getOrDefault("path", fileIn(msg)) + "; check --input",
            true);
      }
    }
    if (msg.contains("is not a Parquet file") || msg.contains("Could not read footer")) {
      return new Line(
          "input file '"
              + fileIn(msg)
              + "' is not a readable Parquet file; remove it from the input or repair it",
          true);
    }
    if (msg.contains("No FileSystem for scheme")
        || (c instanceof ClassNotFoundException && msg.contains("org.apache.hadoop.fs."))) {
      return new Line(
          "no Hadoop file system for this path ("
              + JobPaths.firstLine(c)
              + "): add its connector jars to the job (for s3a:"
              + " --conf spark.jars.packages=org.apache.hadoop:hadoop-aws:3.4.1) or use a local"
              + " path",
          true);
    }
    if (msg.contains("Could not parse Master URL")) {
      return new Line(
          "--master is not a master URL Spark knows ("
              + JobPaths.firstLine(c)
              + "); use local[*], local[N], spark://host:port, yarn or k8s://...",
          true);
    }
    if (msg.contains(NO_SPACE)) {
      return new Line(
          job
              + " ran out of disk space ("
              + JobPaths.firstLine(deepest(c, NO_SPACE))
              + ") writing "
              + (context.output() == null ? "its output" : "--output '" + context.output() + "'")
              + " or Spark's local folders ("
              + SparkFolders.localDirs()
              + "); free some space, or choose an --output or spark.local.dir on a disk with room",
          false);
    }
    if (!(c instanceof OutOfMemoryError)
        && (msg.contains("exited with code 52")
            || (msg.contains("ExecutorLostFailure") && msg.contains("OutOfMemoryError")))) {
      return new Line(
          job
              + " lost an executor that ran out of memory ("
              + JobPaths.firstLine(c)
              + "); give executors more with --executor-memory (spark.executor.memory), e.g."
              + " --executor-memory 8g",
          false);
    }
    if (c instanceof OutOfMemoryError) {
      return new Line(
          job
              + " ran out of memory in the driver ("
              + JobPaths.firstLine(c)
              + "); give it more with --driver-memory, e.g. --driver-memory 8g",
          false);
    }
    return null;
  }

  /**
   * The innermost of {@code t} and its causes whose message holds {@code text}: the file system's
   * own words, not a stage failure's message that quotes them after its task's name.
   */
  private static Throwable deepest(Throwable t, String text) {
    Throwable found = t;
    int depth = 0;
    for (Throwable c = t; c != null && depth < 20; c = c.getCause(), depth++) {
      if (c.getMessage() != null && c.getMessage().contains(text)) {
        found = c;
      }
    }
    return found;
  }

  private static String rootLine(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root == t ? "unreadable" : JobPaths.firstLine(root);
  }

  private static String fileIn(String msg) {
    Matcher m = FILE.matcher(msg);
    return m.find() ? m.group(1).replaceAll("[.,;:]+$", "") : "?";
  }
}
