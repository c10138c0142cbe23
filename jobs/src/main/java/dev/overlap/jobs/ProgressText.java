package dev.overlap.jobs;

import java.util.Locale;

/** The words of generate's progress line ({@link TpchProgress}): the line, durations, time left. */
final class ProgressText {
  private ProgressText() {}

  /**
   * One progress line, e.g. {@code generating TPC-H SF 10: 45% (lineitem: 6,750,000 of 15,000,000
   * orders), about 12 s left}.
   */
  static String line(
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

  /** "about 12 s left" at the rate so far, or that it is too early to say. */
  static String timeLeft(long elapsedNanos, long done, long total) {
    if (done <= 0 || elapsedNanos < 500_000_000L) {
      return "estimating the time left";
    }
    double secondsLeft = elapsedNanos / 1e9 * (total - done) / done;
    return "about " + duration((long) (secondsLeft * 1e9)) + " left";
  }

  /** A duration in words a person reads at a glance: 0.4 s, 12 s, 3 min 20 s, 1 h 5 min. */
  static String duration(long nanos) {
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
  static String format(double scaleFactor) {
    return scaleFactor == Math.rint(scaleFactor)
        ? Long.toString((long) scaleFactor)
        : Double.toString(scaleFactor);
  }
}
