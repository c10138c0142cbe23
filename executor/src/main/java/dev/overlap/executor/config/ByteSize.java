package dev.overlap.executor.config;

import java.util.Locale;

/**
 * Parses and prints byte sizes the way Spark writes them: {@code 512m}, {@code 2g}, {@code 4096}.
 */
public final class ByteSize {
  private ByteSize() {}

  public static long parse(String text) {
    String s = text.trim().toLowerCase(Locale.ROOT);
    if (s.endsWith("b") && s.length() > 1 && !Character.isDigit(s.charAt(s.length() - 2))) {
      s = s.substring(0, s.length() - 1); // "512mb" -> "512m"
    }
    char last = s.isEmpty() ? ' ' : s.charAt(s.length() - 1);
    long unit =
        switch (last) {
          case 'k' -> 1L << 10;
          case 'm' -> 1L << 20;
          case 'g' -> 1L << 30;
          case 't' -> 1L << 40;
          default -> 1;
        };
    String digits = unit == 1 ? s : s.substring(0, s.length() - 1);
    long n = Long.parseLong(digits);
    if (n < 0) {
      throw new IllegalArgumentException("negative size");
    }
    return Math.multiplyExact(n, unit);
  }

  public static String format(long bytes) {
    String[] units = {"", "k", "m", "g", "t"};
    int i = 0;
    long v = bytes;
    while (i < units.length - 1 && v != 0 && v % 1024 == 0) {
      v /= 1024;
      i++;
    }
    return v + units[i];
  }
}
