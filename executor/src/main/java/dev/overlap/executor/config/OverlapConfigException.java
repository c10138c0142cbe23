package dev.overlap.executor.config;

/** A configuration value that cannot be used; the message names the key and what it accepts. */
public final class OverlapConfigException extends IllegalArgumentException {
  private final String key;

  OverlapConfigException(String key, String value, String accepted, String problem) {
    super(
        "Invalid value '"
            + value
            + "' for "
            + key
            + ": "
            + (problem == null ? "cannot be parsed" : problem)
            + " (accepted: "
            + accepted
            + ")");
    this.key = key;
  }

  /** The key whose value was rejected. */
  public String key() {
    return key;
  }
}
