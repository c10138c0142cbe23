package dev.overlap.jobs.delta;

import dev.overlap.jobs.cli.UsageException;
import java.util.Arrays;
import java.util.function.Function;

/**
 * What a session needs to read a Delta table, checked without loading any of Delta's classes:
 * delta-spark's jars on the class path and its session extension in {@code spark.sql.extensions}
 * (it adds the rules that drop the rows deletion vectors mark). {@code ./spark-submit.sh} ships the
 * jars and sets the extension and catalog when {@code --format delta} is given.
 */
public final class DeltaSetup {
  /** Delta's session extension. */
  public static final String EXTENSION = "io.delta.sql.DeltaSparkSessionExtension";

  /** Delta's catalog, for {@code spark.sql.catalog.spark_catalog}. */
  public static final String CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog";

  /** The artifact that brings them, as a line names it. */
  static final String ARTIFACT = "io.delta:delta-spark_2.13:4.0.0";

  private DeltaSetup() {}

  /**
   * Throws a {@link UsageException} when {@code loader} has no delta-spark or {@code conf} (a
   * setting's value, or null) lacks Delta's extension.
   */
  public static void check(Function<String, String> conf, ClassLoader loader) {
    try {
      Class.forName(EXTENSION, false, loader);
    } catch (ClassNotFoundException | LinkageError e) {
      throw new UsageException(
          "--format delta needs delta-spark's jars ("
              + ARTIFACT
              + " and io.delta:delta-storage:4.0.0), which this run lacks: ./spark-submit.sh ships"
              + " them with --format delta; with your own spark-submit, add --packages "
              + ARTIFACT,
          e);
    }
    String extensions = conf.apply("spark.sql.extensions");
    boolean listed =
        extensions != null
            && Arrays.stream(extensions.split(",")).map(String::trim).anyMatch(EXTENSION::equals);
    if (!listed) {
      throw new UsageException(
          "--format delta needs Delta's session extension, but spark.sql.extensions "
              + (extensions == null ? "is not set" : "is '" + extensions + "'")
              + ": give --conf spark.sql.extensions="
              + EXTENSION
              + " (./spark-submit.sh sets it with --format delta; list your own extensions after"
              + " it, separated by commas)");
    }
  }
}
