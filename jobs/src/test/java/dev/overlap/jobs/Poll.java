package dev.overlap.jobs;

import java.time.Duration;

/**
 * Waits for what another process does and tells the tests no other way (a line in its log, a folder
 * it makes): the condition is checked again at each interval until it holds or the deadline passes.
 */
public final class Poll {
  /** A condition to wait for, which may read files to say. */
  @FunctionalInterface
  public interface Condition {
    boolean holds() throws Exception;
  }

  private Poll() {}

  /** Whether {@code condition} came to hold within {@code timeout}, checked every {@code every}. */
  public static boolean until(Duration timeout, Duration every, Condition condition)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.holds()) {
      if (System.nanoTime() - deadline >= 0) {
        return false;
      }
      Thread.sleep(every.toMillis());
    }
    return true;
  }
}
