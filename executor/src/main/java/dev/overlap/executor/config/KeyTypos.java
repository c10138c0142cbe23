package dev.overlap.executor.config;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.apache.commons.text.similarity.LevenshteinDistance;

/** Which registered key a mistyped one most likely meant: see {@link OverlapConf#nearestKey}. */
final class KeyTypos {
  private KeyTypos() {}

  static Optional<String> nearest(String key, List<ConfigEntry<?>> all) {
    String lower = key.toLowerCase(Locale.ROOT);
    int prefix = OverlapConf.PREFIX.length();
    int limit = Math.max(2, (key.length() - Math.min(key.length(), prefix)) / 3);
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (ConfigEntry<?> e : all) {
      int d =
          LevenshteinDistance.getDefaultInstance().apply(lower, e.key().toLowerCase(Locale.ROOT));
      if (d < bestDistance) {
        best = e.key();
        bestDistance = d;
      }
    }
    if (bestDistance <= limit) {
      return Optional.of(best);
    }
    String last = lastSegment(lower);
    for (ConfigEntry<?> e : all) {
      if (!last.isEmpty() && lastSegment(e.key().toLowerCase(Locale.ROOT)).equals(last)) {
        return Optional.of(e.key());
      }
    }
    return Optional.empty();
  }

  private static String lastSegment(String key) {
    return key.substring(key.lastIndexOf('.') + 1);
  }
}
