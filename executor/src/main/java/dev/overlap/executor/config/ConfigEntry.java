package dev.overlap.executor.config;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;

/**
 * One configuration key: its name, type, default, documentation and whether it is read only when
 * the executor starts. Entries are declared once, in {@link OverlapConf}.
 *
 * @param <T> the Java type of the parsed value
 */
public final class ConfigEntry<T> {
  /** The kinds of value a key can hold; each knows how to parse and describe itself. */
  public enum Type {
    BOOLEAN("boolean"),
    INT("int"),
    DOUBLE("double"),
    BYTES("bytes (e.g. 512m, 2g)"),
    DURATION("duration (e.g. 90s, 10min)"),
    STRING("string"),
    ENUM("one of");

    private final String description;

    Type(String description) {
      this.description = description;
    }

    public String description() {
      return description;
    }
  }

  private final String key;
  private final Type type;
  private final String defaultText;
  private final String doc;
  private final boolean startupOnly;
  private final boolean driverStart;
  private final List<String> allowed;
  private final Function<String, T> parser;
  private final Function<T, String> validator;

  private ConfigEntry(
      String key,
      Type type,
      String defaultText,
      String doc,
      boolean startupOnly,
      boolean driverStart,
      List<String> allowed,
      Function<String, T> parser,
      Function<T, String> validator) {
    if (!key.startsWith(OverlapConf.PREFIX)) {
      throw new IllegalArgumentException(key + " does not start with " + OverlapConf.PREFIX);
    }
    this.key = key;
    this.type = type;
    this.defaultText = defaultText;
    this.doc = doc;
    this.startupOnly = startupOnly;
    this.driverStart = driverStart;
    this.allowed = List.copyOf(allowed);
    this.parser = parser;
    this.validator = validator;
    // Parsing the default here means a bad default fails when the registry loads, not in a job.
    parse(defaultText);
  }

  public String key() {
    return key;
  }

  public Type type() {
    return type;
  }

  public String defaultText() {
    return defaultText;
  }

  public String doc() {
    return doc;
  }

  public boolean startupOnly() {
    return startupOnly;
  }

  /** Whether the driver reads this key, once, at its start (a startup-only key). */
  public boolean driverStart() {
    return driverStart;
  }

  /** The accepted values of an enum key, in upper case; empty for other types. */
  public List<String> allowed() {
    return allowed;
  }

  /** A short description of what values are accepted, used in errors and in the docs. */
  public String accepted() {
    return type == Type.ENUM ? "one of " + String.join(", ", allowed) : type.description();
  }

  /**
   * Reads this key from {@code lookup} (which returns null when the key is unset), falling back to
   * the default.
   *
   * @throws OverlapConfigException naming the key and the accepted values when the value is bad
   */
  public T read(Function<String, String> lookup) {
    String raw = lookup.apply(key);
    return parse(raw == null ? defaultText : raw);
  }

  T parse(String raw) {
    T value;
    try {
      value = parser.apply(raw.trim());
    } catch (RuntimeException e) {
      throw new OverlapConfigException(key, raw, accepted(), e.getMessage());
    }
    String problem = validator.apply(value);
    if (problem != null) {
      throw new OverlapConfigException(key, raw, accepted(), problem);
    }
    return value;
  }

  // ---- builders -----------------------------------------------------------------------------

  static Builder builder(String key) {
    return new Builder(key);
  }

  /** Declares one entry; the terminal methods fix its type. */
  static final class Builder {
    private final String key;
    private String doc = "";
    private boolean startupOnly;
    private boolean driverStart;

    private Builder(String key) {
      this.key = Objects.requireNonNull(key);
    }

    Builder doc(String doc) {
      this.doc = doc;
      return this;
    }

    Builder startupOnly() {
      this.startupOnly = true;
      return this;
    }

    /** Read by the driver at its start (not by executors): a startup-only key. */
    Builder readAtDriverStart() {
      this.startupOnly = true;
      this.driverStart = true;
      return this;
    }

    ConfigEntry<Boolean> booleanConf(boolean def) {
      return entry(
          Type.BOOLEAN, Boolean.toString(def), List.of(), ConfigEntry::parseBoolean, v -> null);
    }

    ConfigEntry<Integer> intConf(int def, int min, int max) {
      return entry(
          Type.INT,
          Integer.toString(def),
          List.of(),
          Integer::parseInt,
          v -> v < min || v > max ? "must be between " + min + " and " + max : null);
    }

    ConfigEntry<Double> doubleConf(double def, double minExclusive, double maxInclusive) {
      return entry(
          Type.DOUBLE,
          Double.toString(def),
          List.of(),
          Double::parseDouble,
          v ->
              !(v > minExclusive && v <= maxInclusive)
                  ? "must be greater than " + minExclusive + " and at most " + maxInclusive
                  : null);
    }

    ConfigEntry<Long> bytesConf(String def, long min) {
      return entry(
          Type.BYTES,
          def,
          List.of(),
          ByteSize::parse,
          v -> v < min ? "must be at least " + ByteSize.format(min) : null);
    }

    ConfigEntry<Duration> durationConf(String def, Duration min) {
      return entry(
          Type.DURATION,
          def,
          List.of(),
          DurationText::parse,
          v -> v.compareTo(min) < 0 ? "must be at least " + DurationText.format(min) : null);
    }

    ConfigEntry<String> stringConf(String def) {
      return entry(Type.STRING, def, List.of(), s -> s, v -> null);
    }

    <E extends Enum<E>> ConfigEntry<E> enumConf(Class<E> enumClass, E def) {
      List<String> names = new java.util.ArrayList<>();
      for (E e : enumClass.getEnumConstants()) {
        names.add(e.name());
      }
      return entry(
          Type.ENUM,
          def.name(),
          names,
          s -> Enum.valueOf(enumClass, s.toUpperCase(Locale.ROOT)),
          v -> null);
    }

    /** The entry of this builder's key, doc and start flags, with a type's parsing and checks. */
    private <T> ConfigEntry<T> entry(
        Type type,
        String defaultText,
        List<String> allowed,
        Function<String, T> parser,
        Function<T, String> validator) {
      return new ConfigEntry<>(
          key, type, defaultText, doc, startupOnly, driverStart, allowed, parser, validator);
    }
  }

  private static Boolean parseBoolean(String s) {
    switch (s.toLowerCase(Locale.ROOT)) {
      case "true":
        return true;
      case "false":
        return false;
      default:
        throw new IllegalArgumentException("not a boolean");
    }
  }
}
