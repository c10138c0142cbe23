package dev.overlap.jobs.etl;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.udf;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.trace.Diagnostics;
import dev.overlap.jobs.cli.JobSummary;
import dev.overlap.jobs.cli.PhaseProgress;
import dev.overlap.jobs.cli.StagedOutput;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;

/**
 * TPC-H Q1 and Q6 over Parquet {@code lineitem}: filters and derived columns run as GPU kernels
 * partition by partition with partial aggregates per batch; Spark adds the partials up. The money
 * columns may be decimals of any precision and scale, int, long, float or double, with nulls
 * ({@link EtlShape}); result types are those Spark SQL gives the same queries over the same input,
 * read from Spark's analysis of them, so results compare equal (doubles up to the order of
 * summation).
 *
 * <p>With the {@value #SPARK_SQL} engine ({@code --engine spark-sql}) the same queries run as Spark
 * SQL's own aggregations over the same input and write the same outputs, so that the engines can be
 * compared; with the RAPIDS Accelerator in {@code spark.plugins}, it runs them on the GPU.
 */
public final class EtlJob {
  /** The plan phase's steps: to the run's log only (conf/log4j2.properties). */
  private static final Logger LOG = Diagnostics.logger(EtlJob.class);

  /** The default engine: the queries' per-batch work runs as Overlap's kernels. */
  public static final String OVERLAP = "overlap";

  /** The queries as Spark SQL's own aggregations, for comparison with {@link #OVERLAP}. */
  public static final String SPARK_SQL = "spark-sql";

  /**
   * An operator of the RAPIDS Accelerator in a printed physical plan: a line's operator, after the
   * tree's indentation and branches, whose name starts with {@code Gpu}.
   */
  private static final Pattern GPU_OPERATOR = Pattern.compile("(?m)^[ :|+\\-*()0-9]*Gpu[A-Z]");

  private EtlJob() {}

  /**
   * @throws UsageException before any work when {@code lineitem} lacks a column etl reads or has
   *     one of a type etl cannot use
   */
  public static Dataset<Row> q1(Dataset<Row> lineitem, PipelineReport report) {
    return q1(lineitem, EtlShape.of(lineitem), report);
  }

  static Dataset<Row> q1(Dataset<Row> lineitem, EtlShape shape, PipelineReport report) {
    StructType want = sparkQ1(lineitem, shape).schema(); // analysis only
    Dataset<Row> partial =
        GpuPartitions.map(
            lineitem.selectExpr(shape.select(Q1Kernel.INPUT)), new Q1Kernel(shape), report);
    return partial
        .groupBy("l_returnflag", "l_linestatus")
        .agg(
            sum("sum_qty").as("q"),
            sum("sum_base_price").as("p"),
            sum("sum_disc_price").as("dp"),
            sum("sum_charge").as("c"),
            sum("sum_disc").as("d"),
            sum("count_qty").as("nq"),
            sum("count_price").as("np"),
            sum("count_disc").as("nd"),
            sum("count_order").as("n"))
        .select(
            col("l_returnflag"),
            col("l_linestatus"),
            total("q", want, "sum_qty"),
            total("p", want, "sum_base_price"),
            total("dp", want, "sum_disc_price"),
            total("c", want, "sum_charge"),
            average("q", "nq", shape.types[EtlShape.QUANTITY], want, "avg_qty"),
            average("p", "np", shape.types[EtlShape.PRICE], want, "avg_price"),
            average("d", "nd", shape.types[EtlShape.DISCOUNT], want, "avg_disc"),
            total("n", want, "count_order"))
        .orderBy("l_returnflag", "l_linestatus");
  }

  /**
   * @throws UsageException before any work when {@code lineitem} lacks a column etl reads or has
   *     one of a type etl cannot use
   */
  public static Dataset<Row> q6(Dataset<Row> lineitem, PipelineReport report) {
    return q6(lineitem, EtlShape.of(lineitem), report);
  }

  static Dataset<Row> q6(Dataset<Row> lineitem, EtlShape shape, PipelineReport report) {
    StructType want = sparkQ6(lineitem, shape).schema(); // analysis only
    return GpuPartitions.map(
            lineitem.selectExpr(shape.select(Q6Kernel.INPUT)), new Q6Kernel(shape), report)
        .agg(sum("revenue").as("r"))
        .select(total("r", want, "revenue"));
  }

  /**
   * Spark SQL's own Q1 over {@code lineitem}, for its result types: TPC-H's text, with the input's
   * own column names.
   */
  static Dataset<Row> sparkQ1(Dataset<Row> lineitem, EtlShape shape) {
    String q = shape.column(EtlShape.QUANTITY);
    String e = shape.column(EtlShape.PRICE);
    String d = shape.column(EtlShape.DISCOUNT);
    String t = shape.column(EtlShape.TAX);
    List<Column> aggs = new ArrayList<>();
    aggs.add(expr("sum(" + e + ")").as("sum_base_price"));
    aggs.add(expr("sum(" + e + " * (1 - " + d + "))").as("sum_disc_price"));
    aggs.add(expr("sum(" + e + " * (1 - " + d + ") * (1 + " + t + "))").as("sum_charge"));
    aggs.add(expr("avg(" + q + ")").as("avg_qty"));
    aggs.add(expr("avg(" + e + ")").as("avg_price"));
    aggs.add(expr("avg(" + d + ")").as("avg_disc"));
    aggs.add(expr("count(*)").as("count_order"));
    return lineitem
        .where(shape.column(EtlShape.SHIPDATE) + " <= date '1998-12-01' - interval '90' day")
        .groupBy(
            expr(shape.column(EtlShape.RETURNFLAG)).as("l_returnflag"),
            expr(shape.column(EtlShape.LINESTATUS)).as("l_linestatus"))
        .agg(expr("sum(" + q + ")").as("sum_qty"), aggs.toArray(new Column[0]));
  }

  /**
   * Spark SQL's own Q1 over {@code lineitem}, ordered as {@link #q1} is: the {@value #SPARK_SQL}
   * engine's Q1.
   */
  static Dataset<Row> sqlQ1(Dataset<Row> lineitem, EtlShape shape) {
    return sparkQ1(lineitem, shape).orderBy("l_returnflag", "l_linestatus");
  }

  /**
   * Spark SQL's own Q6 over {@code lineitem}, for its result type; also the {@value #SPARK_SQL}
   * engine's Q6.
   */
  static Dataset<Row> sparkQ6(Dataset<Row> lineitem, EtlShape shape) {
    String ship = shape.column(EtlShape.SHIPDATE);
    String d = shape.column(EtlShape.DISCOUNT);
    return lineitem
        .where(
            ship
                + " >= date '1994-01-01' and "
                + ship
                + " < date '1994-01-01' + interval '1' year and "
                + d
                + " between 0.06 - 0.01 and 0.06 + 0.01 and "
                + shape.column(EtlShape.QUANTITY)
                + " < 24")
        .agg(expr("sum(" + shape.column(EtlShape.PRICE) + " * " + d + ")").as("revenue"));
  }

  /** The total of partial sums {@code col}, in the type of {@code name} in {@code want}. */
  private static Column total(String col, StructType want, String name) {
    return col(col).cast(want.apply(name).dataType()).as(name);
  }

  /**
   * The average of {@code sum} over {@code count} values as Spark computes {@code avg} of a column
   * of type {@code in}: for a decimal, the exact sum divided by the count, rounded half up to the
   * scale of Spark's result type; otherwise in double. Null when there are no values.
   */
  private static Column average(
      String sum, String count, DataType in, StructType want, String name) {
    DataType out = want.apply(name).dataType();
    if (in instanceof DecimalType && out instanceof DecimalType d) {
      int scale = d.scale();
      UserDefinedFunction div =
          udf(
              (UDF2<BigDecimal, Long, BigDecimal>)
                  (s, n) ->
                      s == null || n == null || n == 0
                          ? null
                          : s.divide(BigDecimal.valueOf(n), scale, RoundingMode.HALF_UP),
              d);
      return div.apply(col(sum), col(count)).as(name);
    } else if (out instanceof DoubleType) {
      return expr("cast(" + sum + " as double) / cast(nullif(" + count + ", 0) as double)")
          .as(name);
    }
    throw new IllegalStateException("avg of " + in.simpleString() + " is " + out.simpleString());
  }

  /**
   * Runs both queries with the overlap engine, prints them, writes them under {@code output};
   * returns the rows written.
   */
  public static long run(SparkSession spark, String input, String output, JobSummary summary) {
    return run(spark, input, output, OVERLAP, 1, summary);
  }

  /**
   * Runs both queries with {@code engine}, {@value #OVERLAP} or {@value #SPARK_SQL}, prints them,
   * writes them under {@code output} ({@code q1} and {@code q6}, the same columns, types and values
   * from either engine); returns the rows written. The summary says which engine ran.
   */
  public static long run(
      SparkSession spark,
      String input,
      String output,
      String engine,
      int repeat,
      JobSummary summary) {
    long t = System.nanoTime();
    // The plan phase's steps, in the log: where its time goes (with RAPIDS beside, say).
    long[] steps = new long[6];
    Dataset<Row> lineitem = spark.read().parquet(input);
    steps[0] = System.nanoTime();
    EtlShape shape = EtlShape.of(lineitem); // refuses unusable input before any work
    steps[1] = System.nanoTime();
    Dataset<Row> q1;
    Dataset<Row> q6;
    PipelineReport r1 = null;
    PipelineReport r6 = null;
    if (engine.equals(SPARK_SQL)) {
      q1 = sqlQ1(lineitem, shape);
      steps[2] = System.nanoTime();
      q6 = sparkQ6(lineitem, shape);
    } else if (engine.equals(OVERLAP)) {
      r1 = PipelineReport.create(spark);
      q1 = q1(lineitem, shape, r1);
      steps[2] = System.nanoTime();
      r6 = PipelineReport.create(spark);
      q6 = q6(lineitem, shape, r6);
    } else {
      throw new IllegalArgumentException("no etl engine '" + engine + "'");
    }
    steps[3] = System.nanoTime();
    // With the overlap engine the kernels' input is planned (with the RAPIDS Accelerator, when the
    // session has it): what is left is Spark adding up a few hundred partial rows.
    long rows;
    Runnable restore = engine.equals(OVERLAP) ? withoutRapids(spark) : () -> {};
    try {
      q1 = q1.cache();
      steps[4] = System.nanoTime();
      q6 = q6.cache();
      steps[5] = System.nanoTime();
      if (r1 != null) {
        summary.add("Q1", r1);
        summary.add("Q6", r6);
      }
      LOG.info(
          "plan phase: input read {} ms, checked {} ms, Q1 planned {} ms, Q6 planned {} ms, Q1"
              + " cached {} ms, Q6 cached {} ms",
          (steps[0] - t) / 1_000_000,
          (steps[1] - steps[0]) / 1_000_000,
          (steps[2] - steps[1]) / 1_000_000,
          (steps[3] - steps[2]) / 1_000_000,
          (steps[4] - steps[3]) / 1_000_000,
          (steps[5] - steps[4]) / 1_000_000);
      t = summary.phaseSince("plan", t, "input listed, its schema read and checked");
      // Each query runs to its cached result on its own, so that its time is its own.
      try (PhaseProgress p = PhaseProgress.start(spark, "etl Q1")) {
        rows = q1.count();
      }
      t = summary.phaseSince("Q1", t, "scan, kernels and Spark's final aggregation");
      try (PhaseProgress p = PhaseProgress.start(spark, "etl Q6")) {
        rows += q6.count();
      }
      t = summary.phaseSince("Q6", t, "scan, kernels and Spark's final aggregation");
      q1.write().mode("overwrite").parquet(output + "/q1");
      StagedOutput.pause("between-tables");
      q6.write().mode("overwrite").parquet(output + "/q6");
      t = summary.phaseSince("write", t, "both results written as Parquet");
      System.out.println("TPC-H Q1 (pricing summary):");
      q1.show(false);
      System.out.println("TPC-H Q6 (forecast revenue change):");
      q6.show(false);
      summary.note("engine", engineLine(engine, q1, q6));
      q1.unpersist(true);
      q6.unpersist(true);
      if (repeat > 1) {
        // After the unpersist: a warm run computes its query, it does not read the cached result.
        try (PhaseProgress p = PhaseProgress.start(spark, "etl Q1 again")) {
          summary.note("Q1 again", WarmRuns.of(spark, lineitem, shape, engine, repeat - 1, true));
        }
        try (PhaseProgress p = PhaseProgress.start(spark, "etl Q6 again")) {
          summary.note("Q6 again", WarmRuns.of(spark, lineitem, shape, engine, repeat - 1, false));
        }
      }
    } finally {
      restore.run();
    }
    return rows;
  }

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

  static Runnable withoutRapids(String plugins, org.apache.spark.sql.RuntimeConfig conf) {
    String key = "spark.rapids.sql.enabled";
    if (!rapidsInPlugins(plugins)) {
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
  static boolean rapidsInPlugins(String plugins) {
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
    if (!engine.equals(SPARK_SQL)) {
      return engine
          + " (Overlap's kernels, Spark adds up their partial aggregates"
          + (rapidsInPlugins(q1.sparkSession().conf().get("spark.plugins", ""))
              ? " on the CPU, the RAPIDS Accelerator left out of that tail)"
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
