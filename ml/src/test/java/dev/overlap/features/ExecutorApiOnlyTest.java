package dev.overlap.features;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The encoder stands on the executor's public API alone: the only project classes its sources
 * import are {@code dev.overlap.executor.api}'s (whose boundary {@code ApiBoundaryTest} checks) and
 * its own, so that it never reaches into the executor's internals nor into the jobs.
 */
class ExecutorApiOnlyTest {
  @Test
  void theEncoderImportsOnlyTheExecutorsApi() throws IOException {
    List<String> wrong = new ArrayList<>();
    List<Path> sources;
    try (Stream<Path> files = Files.walk(Path.of("src", "main", "java"))) {
      sources = files.filter(p -> p.toString().endsWith(".java")).toList();
    }
    for (Path f : sources) {
      for (String line : Files.readAllLines(f)) {
        String imported = line.replaceFirst("^import (static )?", "");
        if (!imported.equals(line)
            && imported.startsWith("dev.overlap.")
            && !imported.startsWith("dev.overlap.executor.api.")
            && !imported.startsWith("dev.overlap.features.")) {
          wrong.add(f + ": " + line);
        }
      }
    }
    assertEquals(List.of(), wrong);
  }
}
