package dev.overlap.jobs.tpch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.overlap.jobs.cli.JobArgs;
import org.junit.jupiter.api.Test;

/** generate's {@code --scale}, as parsed; its mistakes: {@code JobArgsTest}. */
class GenerateCommandTest {
  @Test
  void theSmallestScaleThatGivesRowsIsOneOrder() {
    assertEquals("0.0000007", GenerateCommand.smallestScale());
    assertEquals(1, TpchGenerate.orderCount(7e-7, 1));
    assertEquals(0, TpchGenerate.orderCount(6e-7, 1));
    assertEquals(7e-7, GenerateCommand.scale(JobArgs.parse("generate", "--scale", "0.0000007")));
  }
}
