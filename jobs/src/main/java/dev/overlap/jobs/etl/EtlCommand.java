package dev.overlap.jobs.etl;

import dev.overlap.jobs.cli.JobArgs;
import dev.overlap.jobs.cli.JobCommand;
import dev.overlap.jobs.cli.JobPaths;
import dev.overlap.jobs.delta.JobInput;
import java.util.List;
import java.util.Map;

/**
 * {@code etl [--input PATH [--format delta [--version N]]] [--output DIR] [--engine E] [--repeat
 * N]}: TPC-H Q1 and Q6 over {@code lineitem} ({@link EtlJob}).
 */
public final class EtlCommand implements JobCommand {
  /** etl's engines ({@code --engine}), the default first. */
  static final List<String> ENGINES = List.of(EtlJob.OVERLAP, EtlJob.SPARK_SQL);

  @Override
  public String name() {
    return "etl";
  }

  @Override
  public List<String> values() {
    return List.of("--input", "--format", "--version", "--output", "--engine", "--repeat");
  }

  @Override
  public Map<String, String> examples() {
    return Map.of("--engine", "--engine spark-sql", "--repeat", "--repeat 3");
  }

  @Override
  public void check(JobArgs a) {
    engine(a);
    repeat(a);
  }

  @Override
  public Run prepare(JobArgs a, JobPaths paths, String output) {
    String engine = engine(a);
    int repeat = repeat(a);
    return (spark, input, to, summary) ->
        EtlJob.run(spark, JobInput.of(a, input), to, engine, repeat, summary);
  }

  /**
   * {@code --engine}: what runs the queries, {@value EtlJob#OVERLAP} (Overlap's kernels, the
   * default) or {@value EtlJob#SPARK_SQL} (Spark SQL's own aggregations).
   */
  static String engine(JobArgs a) {
    return a.oneOf("--engine", ENGINES);
  }

  /**
   * {@code --repeat}: how many times each query runs, a whole number from 1 to 100; 1 by default.
   */
  static int repeat(JobArgs a) {
    return a.wholeNumber("--repeat", 1, 1, 100);
  }
}
