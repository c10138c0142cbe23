package dev.overlap.executor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * conf/jvm-options.txt is the one list of the JVM options Spark needs on Java 17: spark-submit.sh
 * reads it, and the build hands it to the test JVM as an argument file. This JVM runs with every
 * option in it.
 */
class JvmOptionsTest {
  @Test
  void theTestJvmRunsWithEveryOptionOfConfJvmOptions() throws Exception {
    Path file = Path.of("../conf/jvm-options.txt");
    assertTrue(Files.isRegularFile(file), file.toAbsolutePath().toString());
    List<String> options = Files.readAllLines(file).stream().filter(l -> !l.isBlank()).toList();
    assertTrue(options.size() >= 13, "only " + options);
    assertTrue(
        options.stream().allMatch(o -> o.startsWith("-") && !o.contains(" ")),
        "one option a line, as spark-submit.sh reads them: " + options);
    List<String> running = ManagementFactory.getRuntimeMXBean().getInputArguments();
    assertEquals(List.of(), options.stream().filter(o -> !running.contains(o)).toList(), "missing");
  }
}
