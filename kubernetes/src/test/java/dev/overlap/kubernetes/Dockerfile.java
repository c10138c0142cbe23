package dev.overlap.kubernetes;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Dockerfile read as its instructions: comments dropped, continued lines joined, and each {@code
 * ARG}'s default known, so that {@code ${NAME}} in later instructions reads as a build without
 * {@code --build-arg} would.
 */
final class Dockerfile {
  /** One instruction: its keyword (upper case) and the rest of its line. */
  record Instruction(String keyword, String args) {}

  private static final Pattern VARIABLE = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)\\}");

  final List<Instruction> instructions = new ArrayList<>();
  final Map<String, String> argDefaults = new LinkedHashMap<>();

  Dockerfile(String text) {
    StringBuilder current = new StringBuilder();
    for (String line : text.split("\n", -1)) {
      String trimmed = line.strip();
      if (trimmed.startsWith("#") || (trimmed.isEmpty() && current.length() == 0)) {
        continue;
      }
      if (trimmed.endsWith("\\")) {
        current.append(trimmed, 0, trimmed.length() - 1).append(' ');
        continue;
      }
      current.append(trimmed);
      String whole = current.toString().strip();
      current.setLength(0);
      if (whole.isEmpty()) {
        continue;
      }
      String[] parts = whole.split("\\s+", 2);
      Instruction i = new Instruction(parts[0].toUpperCase(), parts.length > 1 ? parts[1] : "");
      instructions.add(i);
      if (i.keyword().equals("ARG") && i.args().contains("=")) {
        String[] kv = i.args().split("=", 2);
        argDefaults.put(kv[0].strip(), kv[1].strip());
      }
    }
  }

  List<Instruction> all(String keyword) {
    return instructions.stream().filter(i -> i.keyword().equals(keyword)).toList();
  }

  int indexOfLast(String keyword) {
    for (int i = instructions.size() - 1; i >= 0; i--) {
      if (instructions.get(i).keyword().equals(keyword)) {
        return i;
      }
    }
    return -1;
  }

  /** {@code s} with every {@code ${ARG}} replaced by its default; an unknown one fails. */
  String resolve(String s) {
    Matcher m = VARIABLE.matcher(s);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String value = argDefaults.get(m.group(1));
      if (value == null) {
        throw new AssertionError("${" + m.group(1) + "} has no ARG default: " + s);
      }
      m.appendReplacement(out, Matcher.quoteReplacement(value));
    }
    return m.appendTail(out).toString();
  }
}
