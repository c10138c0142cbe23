package dev.overlap.executor.config;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * What a job ships to its executors: the raw values of the keys that are not startup-only, read on
 * the driver and applied to each of the job's tasks ({@link OverlapConf#fromMap}).
 */
public final class JobSettings {
  private JobSettings() {}

  /**
   * The raw values {@code lookup} holds for the keys that are not startup-only. Validated, so a bad
   * value fails here, naming its key.
   *
   * @throws OverlapConfigException for the first key with an invalid value
   */
  public static Map<String, String> from(Function<String, String> lookup) {
    Map<String, String> out = new HashMap<>();
    for (ConfigEntry<?> e : OverlapConf.ALL) {
      String v = e.startupOnly() ? null : lookup.apply(e.key());
      if (v != null) {
        out.put(e.key(), v);
      }
    }
    OverlapConf.fromMap(out);
    return Map.copyOf(out);
  }
}
