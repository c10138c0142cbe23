package dev.overlap.executor.gpu;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How long each step of an executor's GPU start took, for one line in the run's log: where a job's
 * start goes before its first task.
 */
final class StartSteps {
  private final long begin = System.nanoTime();
  private final List<String> done = new ArrayList<>();
  private long last = begin;

  /** Marks the end of {@code step}, which began where the last one ended. */
  void done(String step) {
    long now = System.nanoTime();
    done.add(String.format(Locale.ROOT, "%s %d ms", step, (now - last) / 1_000_000));
    last = now;
  }

  /** "GPU 0 set up in 812 ms: RMM pool 350 ms, ..." */
  String line(int device) {
    return String.format(
        Locale.ROOT,
        "GPU %d set up in %d ms: %s",
        device,
        (last - begin) / 1_000_000,
        String.join(", ", done));
  }
}
