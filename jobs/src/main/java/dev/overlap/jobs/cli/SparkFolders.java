package dev.overlap.jobs.cli;

import java.nio.file.Paths;
import org.apache.spark.SparkConf;

/**
 * The folders Spark and Overlap write into on this machine besides the output, checked before Spark
 * starts: Spark's local folders ({@code spark.local.dir}, or {@code SPARK_LOCAL_DIRS}, which
 * overrides it), of which one must be creatable, and in local mode {@code spark.overlap.trace.dir}.
 * Each refusal names the key or variable.
 */
public final class SparkFolders {
  static final String LOCAL_DIR = "spark.local.dir";
  static final String LOCAL_DIRS_ENV = "SPARK_LOCAL_DIRS";
  static final String TRACE_DIR = "spark.overlap.trace.dir";

  private static volatile String localDirs = "java.io.tmpdir";

  private SparkFolders() {}

  /** Where Spark's local folders were asked for, as the user set them. */
  static String localDirs() {
    return localDirs;
  }

  public static void check(SparkConf conf, String master) {
    String env = System.getenv(LOCAL_DIRS_ENV);
    String key = env != null && !env.isBlank() ? LOCAL_DIRS_ENV : LOCAL_DIR;
    String dirs = key.equals(LOCAL_DIRS_ENV) ? env : conf.get(LOCAL_DIR, "");
    if (!dirs.isBlank()) {
      localDirs = key + "=" + dirs;
      UsageException first = null;
      boolean one = false;
      for (String d : dirs.split(",")) {
        if (d.isBlank()) {
          continue;
        }
        try {
          Creatable.folder(Paths.get(d.trim()), key + " '" + d.trim() + "'");
          one = true;
        } catch (UsageException e) {
          first = first == null ? e : first;
        }
      }
      if (!one && first != null) {
        throw new UsageException(
            first.getMessage()
                + " (Spark keeps its shuffle and spill files there"
                + (key.equals(LOCAL_DIRS_ENV) ? "; the variable overrides " + LOCAL_DIR : "")
                + ")");
      }
    } else {
      localDirs = "java.io.tmpdir " + System.getProperty("java.io.tmpdir");
    }
    String trace = conf.get(TRACE_DIR, "").trim();
    if (!trace.isEmpty() && master.startsWith("local")) {
      String path = trace.startsWith("file:") ? java.net.URI.create(trace).getPath() : trace;
      Creatable.folder(
          Paths.get(path), TRACE_DIR + " '" + trace + "' (the folder for the timeline files)");
    }
  }
}
