package dev.overlap.jobs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs the user's commands (./spark-submit.sh ...) as a user would, and keeps their output. */
public final class Shell {
  /** The project root: the jobs module's parent. */
  static final Path ROOT = Path.of("").toAbsolutePath().getParent();

  record Result(int exitCode, String output) {}

  private Shell() {}

  static Result run(List<String> command, Map<String, String> env, Path dir, long timeoutSeconds)
      throws IOException, InterruptedException {
    Path log = Files.createTempFile("overlap-cmd", ".log");
    ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
    forTests(pb.environment());
    pb.environment().putAll(env);
    pb.environment().putIfAbsent("SPARK_LOCAL_IP", "127.0.0.1");
    pb.environment().remove("SPARK_HOME");
    pb.redirectErrorStream(true).redirectOutput(log.toFile());
    Process p = pb.start();
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      throw new IllegalStateException(
          "timed out after " + timeoutSeconds + " s: " + command + "\n" + Files.readString(log));
    }
    String out = Files.readString(log, StandardCharsets.UTF_8);
    Files.delete(log);
    return new Result(p.exitValue(), out);
  }

  /**
   * Checks a run's exit code, that it printed exactly one error line ({@code overlap: ...} or
   * {@code spark-submit.sh: ...}, warnings aside) holding each of {@code parts}, and that no stack
   * trace reached the terminal; returns that line.
   */
  static String oneLine(Result r, int exit, String... parts) {
    String out = r.output();
    org.junit.jupiter.api.Assertions.assertEquals(exit, r.exitCode(), out);
    List<String> errors = new java.util.ArrayList<>();
    // A terminal shows what follows a carriage return over what preceded it (a progress bar).
    for (String l : out.split("[\r\n]")) {
      if ((l.startsWith("overlap: ") && !l.startsWith("overlap: warning: "))
          || l.startsWith("spark-submit.sh: ")) {
        errors.add(l);
      }
    }
    org.junit.jupiter.api.Assertions.assertEquals(1, errors.size(), "one error line:\n" + out);
    for (String part : parts) {
      org.junit.jupiter.api.Assertions.assertTrue(
          errors.get(0).contains(part), "expected '" + part + "' in:\n" + out);
    }
    org.junit.jupiter.api.Assertions.assertFalse(out.contains("\tat "), "a stack trace:\n" + out);
    org.junit.jupiter.api.Assertions.assertFalse(out.contains("Exception in thread"), out);
    return errors.get(0);
  }

  /**
   * The JVM options the build gives the Java processes that tests start (property
   * overlap.test.javaOptions, set in jobs/pom.xml: a JIT that starts quickly, for the many short
   * runs), through the launcher's JDK_JAVA_OPTIONS, which also prints one "NOTE: Picked up" line.
   * They change how fast a run starts, not what it does.
   */
  static void forTests(Map<String, String> env) {
    String opts = System.getProperty("overlap.test.javaOptions", "").strip();
    if (!opts.isEmpty()) {
      env.putIfAbsent("JDK_JAVA_OPTIONS", opts);
    }
  }

  static Result submit(Path dir, String... args) throws IOException, InterruptedException {
    List<String> cmd = new java.util.ArrayList<>();
    cmd.add(ROOT.resolve("spark-submit.sh").toString());
    cmd.addAll(List.of(args));
    return run(cmd, Map.of(), dir, 900);
  }
}
