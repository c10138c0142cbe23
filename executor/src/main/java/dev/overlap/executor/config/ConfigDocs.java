package dev.overlap.executor.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes the key table of {@code docs/configs.md} from {@link OverlapConf#ALL}, between marker
 * comments, leaving the text around them as it is.
 *
 * <p>After changing a key, run from the repository root {@code mvn -q -pl executor compile
 * exec:java -Dexec.mainClass=dev.overlap.executor.config.ConfigDocs -Dexec.args=docs/configs.md}
 * (the command docs/configs.md gives); a test fails while the file is stale.
 */
public final class ConfigDocs {
  public static final String BEGIN = "<!-- BEGIN GENERATED CONFIG TABLE -->";
  public static final String END = "<!-- END GENERATED CONFIG TABLE -->";

  private ConfigDocs() {}

  /**
   * When a key is read: the driver's keys at its start, the other startup keys at an executor's.
   */
  static String read(ConfigEntry<?> e) {
    if (!e.startupOnly()) {
      return "per job (session conf)";
    }
    return e.driverStart() ? "at driver start" : "at executor start";
  }

  /** The generated table, markers included. */
  public static String table() {
    StringBuilder sb = new StringBuilder();
    sb.append(BEGIN).append('\n');
    sb.append("| Key | Type | Default | Read | Meaning |\n");
    sb.append("| --- | --- | --- | --- | --- |\n");
    for (ConfigEntry<?> e : OverlapConf.ALL) {
      sb.append("| `")
          .append(e.key())
          .append("` | ")
          .append(e.accepted())
          .append(e.defaultText().isEmpty() ? " | (empty) | " : " | `" + e.defaultText() + "` | ")
          .append(read(e))
          .append(" | ")
          .append(e.doc().replace("|", "\\|"))
          .append(" |\n");
    }
    sb.append(END);
    return sb.toString();
  }

  /** The file's text with the table between the markers replaced by the current one. */
  public static String render(String current) {
    int b = current.indexOf(BEGIN);
    int e = current.indexOf(END);
    if (b < 0 || e < b) {
      throw new IllegalStateException("docs/configs.md lacks the markers " + BEGIN + " / " + END);
    }
    return current.substring(0, b) + table() + current.substring(e + END.length());
  }

  /** Regenerates the file given as the first argument (default {@code docs/configs.md}). */
  public static void main(String[] args) throws IOException {
    Path path = Path.of(args.length > 0 ? args[0] : "docs/configs.md");
    String current = Files.readString(path, StandardCharsets.UTF_8);
    Files.writeString(path, render(current), StandardCharsets.UTF_8);
    System.out.println("wrote " + path);
  }
}
