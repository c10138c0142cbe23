package dev.overlap.jobs.cli;

import java.util.Locale;

/**
 * The words of the progress lines ({@code TpchProgress}, {@link PhaseProgress}): the lines,
 * durations, time left.
 */
public final class ProgressText {
  private ProgressText() {}

  /**
   * One progress line, e.g. {@code generating TPC-H SF 10: 45% (lineitem: 6,750,000 of 15,000,000
   * orders), about 12 s left}.
   */
  public static String line(
      double scaleFactor, int percent, String table, long tableOrders, long orders, String left) {
    return String.format(
        Locale.ROOT,
        "generating TPC-H SF %s: %3d%% (%s: %,d of %,d%s), %s",
        format(scaleFactor),
        percent,
        table,
        tableOrders,
        orders,
        table.equals("orders") ? "" : " orders",
        left);
  }

  /**
   * A phase's line, e.g. {@code etl Q1: 45% (9 of 20 input tasks, 27,000,000 rows) in 4.2 s, about
   * 5.1 s left}; before its first stage starts, {@code etl Q1: starting, 1.2 s}.
   */
  static String phaseLine(
      String label, long done, long total, long rows, String left, long elapsedNanos) {
    if (total == 0) {
      return String.format(Locale.ROOT, "%s: starting, %s", label, duration(elapsedNanos));
    }
    return String.format(
        Locale.ROOT,
        "%s: %3d%% (%,d of %,d input tasks, %,d rows) in %s, %s",
        label,
        100 * done / total,
        done,
        total,
        rows,
        duration(elapsedNanos),
        left);
  }

  /**
   * Whether standard output is a terminal. From Java 22 {@link System#console} is not null for a
   * redirected output either, and {@code Console.isTerminal} (Java 22 and later) says; on Java 17
   * to 21 a console exists only for a terminal.
   */
  public static boolean stdoutIsTerminal() {
    java.io.Console console = System.console();
    if (console == null) {
      return false;
    }
    try {
      return (Boolean) java.io.Console.class.getMethod("isTerminal").invoke(console);
    } catch (NoSuchMethodException e) {
      return true;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return false;
    }
  }

  /** {@code text} cut to fit in {@code width} columns less one, so that it never wraps. */
  static String fit(String text, int width) {
    int room = Math.max(10, width - 1);
    return text.length() <= room ? text : text.substring(0, room - 1) + "…";
  }

  /** The terminal's width from {@code COLUMNS}, 80 (Spark's own default) when unknown. */
  public static int terminalWidth() {
    try {
      return Integer.parseInt(System.getenv().getOrDefault("COLUMNS", "80").trim());
    } catch (NumberFormatException e) {
      return 80;
    }
  }

  /** "about 12 s left" at the rate so far, or that it is too early to say. */
  public static String timeLeft(long elapsedNanos, long done, long total) {
    if (done <= 0 || elapsedNanos < 500_000_000L) {
      return "estimating the time left";
    }
    double secondsLeft = elapsedNanos / 1e9 * (total - done) / done;
    return "about " + duration((long) (secondsLeft * 1e9)) + " left";
  }

  /** A duration in words a person reads at a glance: 0.4 s, 12 s, 3 min 20 s, 1 h 5 min. */
  public static String duration(long nanos) {
    double s = nanos / 1e9;
    if (s < 10) {
      return String.format(Locale.ROOT, "%.1f s", s);
    }
    long secs = Math.round(s);
    if (secs < 60) {
      return secs + " s";
    } else if (secs < 3600) {
      return secs / 60 + " min " + secs % 60 + " s";
    }
    return secs / 3600 + " h " + secs % 3600 / 60 + " min";
  }

  /** The scale factor as given: 10 rather than 10.0. */
  public static String format(double scaleFactor) {
    return scaleFactor == Math.rint(scaleFactor)
        ? Long.toString((long) scaleFactor)
        : Double.toString(scaleFactor);
  }
}
