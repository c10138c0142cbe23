package dev.overlap.executor.config;

/**
 * The keys under {@code spark.overlap.sql.}: Spark SQL and DataFrame queries run through Overlap's
 * pipeline with no kernel written. Part of the one registry: {@link OverlapConf#ALL} lists them
 * with the others.
 */
public final class SqlKeys {
  static final String PREFIX = OverlapConf.PREFIX + "sql.";

  private SqlKeys() {}

  public static final ConfigEntry<Boolean> ENABLED =
      ConfigEntry.builder(PREFIX + "enabled")
          .doc(
              "Run the parts of Spark SQL and DataFrame queries that the SQL compiler takes (a"
                  + " Parquet or Delta scan, its filters and computed columns, and a partial"
                  + " aggregate over them) as one Overlap stage on the GPU, with no kernel written;"
                  + " Spark does the rest of the plan. Read each time a query is planned, so a job"
                  + " can turn it off for one query. false leaves every plan to Spark.")
          .booleanConf(true);

  public static final ConfigEntry<SqlExplain> EXPLAIN =
      ConfigEntry.builder(PREFIX + "explain")
          .doc(
              "Log what the SQL compiler did with each aggregate over a file scan: NOT_ON_GPU logs"
                  + " each part left to Spark with the expression at fault and why, ALL also each"
                  + " part taken, NONE nothing. df.explain() shows a taken part as a scan named"
                  + " OverlapStage.")
          .enumConf(SqlExplain.class, SqlExplain.NONE);

  public static final ConfigEntry<Boolean> WITHOUT_GPU =
      ConfigEntry.builder(PREFIX + "withoutGpu")
          .doc(
              "Take a query's parts even where no GPU is known to the driver: they then run"
                  + " through the compiled kernels' CPU implementations, which evaluate Spark's own"
                  + " expressions. Meant for tests; without it such parts are left to Spark.")
          .booleanConf(false);
}
