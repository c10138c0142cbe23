package dev.overlap.executor.gpu;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class StartStepsTest {
  @Test
  void theLineNamesEveryStepInOrderAndTheirTimesAddUpToTheTotal() throws Exception {
    StartSteps steps = new StartSteps();
    steps.done("device");
    Thread.sleep(20); // a step that takes time, so its share shows
    steps.done("RMM pool");
    steps.done("streams");
    String line = steps.line(3);
    Matcher m =
        Pattern.compile(
                "GPU 3 set up in (\\d+) ms: device (\\d+) ms, RMM pool (\\d+) ms, streams (\\d+) ms")
            .matcher(line);
    assertTrue(m.matches(), line);
    long total = Long.parseLong(m.group(1));
    long sum = 0;
    for (int g = 2; g <= 4; g++) {
      sum += Long.parseLong(m.group(g));
    }
    assertTrue(Long.parseLong(m.group(3)) >= 20, line);
    // Each step is rounded down to whole milliseconds: at most one lost per step.
    assertTrue(total >= sum && total <= sum + 3, line);
  }
}
