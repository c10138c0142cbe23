package dev.overlap.executor.config;

/** What {@code spark.overlap.sql.explain} logs of the SQL compiler's choices. */
public enum SqlExplain {
  /** Nothing. */
  NONE,
  /** Each part of a plan left to Spark, with the expression at fault and why. */
  NOT_ON_GPU,
  /** What was left, and what was taken. */
  ALL
}
