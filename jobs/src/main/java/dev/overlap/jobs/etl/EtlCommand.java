package dev.overlap.jobs.etl;

import dev.overlap.jobs.cli.JobArgs;
import dev.overlap.jobs.cli.JobCommand;
import dev.overlap.jobs.cli.JobPaths;
import dev.overlap.jobs.delta.JobInput;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * {@code etl [--input PATH [--format delta [--version N]]] [--output DIR] [--engine E] [--repeat
 * N]}: TPC-H Q1 and Q6 over {@code lineitem} ({@link EtlJob}); with {@code --sql TEXT} or {@code
 * --query FILE} (and {@code --table NAME}, default {@code t}), the user's own query ({@link
 * UserQuery}).
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
    return List.of(
        "--input",
        "--format",
        "--version",
        "--output",
        "--engine",
        "--repeat",
        "--sql",
        "--query",
        "--table");
  }

  @Override
  public Map<String, String> examples() {
    return Map.of(
        "--engine",
        "--engine spark-sql",
        "--repeat",
        "--repeat 3",
        "--sql",
        "--sql \"SELECT l_returnflag, count(*) FROM t GROUP BY l_returnflag\"",
        "--query",
        "--query q1.sql",
        "--table",
        "--table lineitem");
  }

  @Override
  public void check(JobArgs a) {
    engine(a);
    repeat(a);
    sql(a);
  }

  @Override
  public Run prepare(JobArgs a, JobPaths paths, String output) {
    String engine = engine(a);
    int repeat = repeat(a);
    String sql = sql(a);
    if (sql != null) {
      String table = a.get("--table").orElse("t");
      return (spark, input, to, summary) ->
          UserQuery.run(spark, JobInput.of(a, input), to, sql, table, repeat, summary);
    }
    return (spark, input, to, summary) ->
        EtlJob.run(spark, JobInput.of(a, input), to, engine, repeat, summary);
  }

  /**
   * The user's query: {@code --sql}'s text or the contents of {@code --query}'s file; null for
   * TPC-H Q1 and Q6. Refused with one line when both are given, the file cannot be read, or {@code
   * --engine} or {@code --table} is given without a query.
   */
  static String sql(JobArgs a) {
    if (a.has("--sql") && a.has("--query")) {
      throw new IllegalArgumentException("give --sql or --query, not both");
    }
    if (a.has("--query")) {
      Path file = Path.of(a.get("--query").orElseThrow());
      try {
        return Files.readString(file);
      } catch (IOException e) {
        throw new IllegalArgumentException(
            "--query " + file + ": cannot read it (" + e.getMessage() + "); give a SQL file");
      }
    }
    if (a.has("--sql")) {
      return a.get("--sql").orElseThrow();
    }
    if (a.has("--table")) {
      throw new IllegalArgumentException("--table names the input in --sql or --query; give one");
    }
    return null;
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
