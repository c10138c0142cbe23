package dev.overlap.jobs.etl;

import java.util.List;
import java.util.regex.Pattern;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RuntimeConfig;
import org.apache.spark.sql.SparkSession;

/**
 * The RAPIDS Accelerator beside etl's engines: whether {@code spark.plugins} lists it, switching it
 * off for the overlap engine's tail, and the summary's engine line, which says whether Spark's
 * plans ran its operators.
 */
final class RapidsAccelerator {
  /**
   * An operator of the RAPIDS Accelerator in a printed physical plan: a line's operator, after the
   * tree's indentation and branches, whose name starts with {@code Gpu}.
   */
  private static final Pattern GPU_OPERATOR = Pattern.compile("(?m)^[ :|+\\-*()0-9]*Gpu[A-Z]");

  private RapidsAccelerator() {}

  /**
   * With the RAPIDS Accelerator in {@code spark.plugins}, switches it off for the queries planned
   * until the returned action runs, which puts the setting back. The overlap engine's tail (adding
   * up the kernels' partial rows, writing a handful of rows) gains nothing on the GPU: RAPIDS would
   * copy those rows up and back, and its first use of each operator costs more than the CPU takes
   * (docs/benchmarks.md, eleventh set). Without RAPIDS, nothing is changed.
   */
  static Runnable withoutRapids(SparkSession spark) {
    return withoutRapids(spark.conf().get("spark.plugins", ""), spark.conf());
  }

  static Runnable withoutRapids(String plugins, RuntimeConfig conf) {
    String key = "spark.rapids.sql.enabled";
    if (!inPlugins(plugins)) {
      return () -> {};
    }
    String before = conf.getOption(key).getOrElse(() -> null);
    conf.set(key, "false");
    return () -> {
      if (before == null) {
        conf.unset(key);
      } else {
        conf.set(key, before);
      }
    };
  }

  /** Whether {@code spark.plugins}' value lists the RAPIDS Accelerator. */
  static boolean inPlugins(String plugins) {
    for (String p : plugins.split(",")) {
      if (p.trim().equals("com.nvidia.spark.SQLPlugin")) {
        return true;
      }
    }
    return false;
  }

  /** Whether a printed physical plan holds operators of the RAPIDS Accelerator. */
  static boolean gpuOperators(String plan) {
    return GPU_OPERATOR.matcher(plan).find();
  }

  /**
   * The summary's engine line: for spark-sql, whether Spark's plans ran operators of the RAPIDS
   * Accelerator (their names start with {@code Gpu}) or only Spark's own.
   */
  static String engineLine(String engine, Dataset<Row> q1, Dataset<Row> q6) {
    if (!engine.equals(EtlJob.SPARK_SQL)) {
      return engine
          + " (Overlap's kernels in one stage, the driver adds up their partial aggregates"
          + (inPlugins(q1.sparkSession().conf().get("spark.plugins", ""))
              ? ", the RAPIDS Accelerator left out of that tail)"
              : ")");
    }
    boolean gpu = false;
    for (Dataset<Row> q : List.of(q1, q6)) {
      gpu |= gpuOperators(q.queryExecution().executedPlan().toString());
    }
    return engine
        + (gpu
            ? " (Spark SQL's aggregations, with GPU operators of the RAPIDS Accelerator)"
            : " (Spark SQL's aggregations, on Spark's own CPU operators)");
  }
}
