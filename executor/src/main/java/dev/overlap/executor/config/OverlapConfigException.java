package dev.overlap.executor.config;

import dev.overlap.executor.api.Public;

/**
 * A configuration error, in a one-line message: a value that cannot be used (naming the key and
 * what it accepts) or a {@code spark.overlap.*} key that does not exist (naming the nearest one
 * that does). {@code GpuPartitions.map} throws it for a bad key set on the session, so jobs may
 * catch it.
 */
@Public
public final class OverlapConfigException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String key;

  OverlapConfigException(String key, String value, String accepted, String problem) {
    this(
        key,
        "Invalid value '"
            + value
            + "' for "
            + key
            + ": "
            + (problem == null ? "cannot be parsed" : problem)
            + " (accepted: "
            + accepted
            + ")");
  }

  private OverlapConfigException(String key, String message) {
    super(message);
    this.key = key;
  }

  /** An unregistered key under the prefix, with the registered key it most likely meant, if any. */
  static OverlapConfigException unknownKey(String key, String suggestion) {
    return new OverlapConfigException(
        key,
        "unknown config key '"
            + key
            + "'"
            + (suggestion == null ? "" : "; did you mean '" + suggestion + "'?")
            + " (every key: "
            + OverlapConf.DOCS
            + ")");
  }

  /** The key whose value was rejected, or the unknown key. */
  public String key() {
    return key;
  }
}
