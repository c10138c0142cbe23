package dev.overlap.executor.config;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Locale;

/**
 * Parses and prints durations the way Spark writes them: {@code 500ms}, {@code 90s}, {@code 10min}
 * (or {@code 10m}), {@code 2h}, {@code 1d}; a bare number is seconds.
 */
public final class DurationText {
  private static final ChronoUnit[] LARGEST_FIRST = {
    ChronoUnit.DAYS, ChronoUnit.HOURS, ChronoUnit.MINUTES, ChronoUnit.SECONDS
  };

  private DurationText() {}

  /**
   * @throws IllegalArgumentException without a number, with a negative one or an unknown unit
   * @throws ArithmeticException past what {@link Duration} holds
   */
  public static Duration parse(String text) {
    String s = text.trim().toLowerCase(Locale.ROOT);
    int digits = 0;
    while (digits < s.length() && Character.isDigit(s.charAt(digits))) {
      digits++;
    }
    if (digits == 0) {
      throw new IllegalArgumentException("not a whole number followed by a unit");
    }
    long n = Long.parseLong(s.substring(0, digits));
    String unit = s.substring(digits).trim();
    ChronoUnit u =
        switch (unit) {
          case "ms" -> ChronoUnit.MILLIS;
          case "", "s" -> ChronoUnit.SECONDS;
          case "m", "min" -> ChronoUnit.MINUTES;
          case "h" -> ChronoUnit.HOURS;
          case "d" -> ChronoUnit.DAYS;
          default -> throw new IllegalArgumentException("unknown unit '" + unit + "'");
        };
    return Duration.of(n, u);
  }

  /** In the largest unit that holds it whole: {@code 10min}, {@code 90s}, {@code 300ms}. */
  public static String format(Duration d) {
    long seconds = d.getSeconds();
    if (d.getNano() != 0 || seconds == 0) {
      return d.toMillis() + "ms";
    }
    for (ChronoUnit u : LARGEST_FIRST) {
      long unit = u.getDuration().getSeconds();
      if (seconds % unit == 0) {
        return seconds / unit + suffix(u);
      }
    }
    throw new AssertionError("a second divides every whole number of seconds");
  }

  private static String suffix(ChronoUnit u) {
    return switch (u) {
      case DAYS -> "d";
      case HOURS -> "h";
      case MINUTES -> "min";
      default -> "s";
    };
  }
}
