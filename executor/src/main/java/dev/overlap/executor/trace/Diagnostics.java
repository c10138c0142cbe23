package dev.overlap.executor.trace;

import dev.overlap.executor.api.Public;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loggers for timing and detail lines (planning steps, warm-ups, per-file notes) that belong in the
 * run's log and not on the terminal: their names start with {@value #PREFIX}, which
 * conf/log4j2.properties sends to the log file only. A job may use them for lines of its own.
 */
@Public
public final class Diagnostics {
  /** The loggers' common name prefix, as conf/log4j2.properties spells it. */
  public static final String PREFIX = "dev.overlap.diagnostics.";

  private Diagnostics() {}

  /** The diagnostics logger of {@code owner}: {@value #PREFIX} and its simple name. */
  public static Logger logger(Class<?> owner) {
    return LoggerFactory.getLogger(PREFIX + owner.getSimpleName());
  }
}
