package dev.overlap.executor.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.apache.commons.text.similarity.LevenshteinDistance;

/**
 * Keys under {@code spark.overlap.} that are not registered, and which key a mistyped one meant.
 */
public final class UnknownKeys {
  private UnknownKeys() {}

  /**
   * Fails when a key under {@link OverlapConf#PREFIX} is not registered, naming the first such key
   * in sorted order and the registered key nearest to it. Keys outside the prefix are ignored.
   *
   * @throws OverlapConfigException for an unknown key
   */
  public static void check(Iterable<String> keys) {
    List<String> unknown = new ArrayList<>();
    for (String k : keys) {
      if (k.startsWith(OverlapConf.PREFIX)
          && OverlapConf.ALL.stream().noneMatch(e -> e.key().equals(k))) {
        unknown.add(k);
      }
    }
    if (!unknown.isEmpty()) {
      Collections.sort(unknown);
      String key = unknown.get(0);
      throw OverlapConfigException.unknownKey(key, nearest(key).orElse(null));
    }
  }

  /**
   * The registered key {@code key} most likely meant: the one at the smallest edit distance,
   * ignoring case, when that distance is small enough to be a typo (at most 2, or a third of the
   * part after the prefix); else one whose last segment is the same but for case ({@code
   * spark.overlap.pipeline.enabled} gives {@code spark.overlap.enabled}). Empty when none is close.
   */
  public static Optional<String> nearest(String key) {
    List<ConfigEntry<?>> all = OverlapConf.ALL;
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
