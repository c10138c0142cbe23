package dev.overlap.jobs.etl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.overlap.jobs.cli.JobArgs;
import org.junit.jupiter.api.Test;

/** etl's {@code --engine} and {@code --repeat}, as parsed; their mistakes: {@code JobArgsTest}. */
class EtlCommandTest {
  @Test
  void etlRunsOverlapsKernelsByDefault() {
    assertEquals("overlap", EtlCommand.engine(JobArgs.parse("etl")));
    assertEquals(
        "overlap", EtlCommand.engine(JobArgs.parse("etl", "--input", "li", "--overwrite")));
  }

  @Test
  void etlTakesEitherEngine() {
    assertEquals("spark-sql", EtlCommand.engine(JobArgs.parse("etl", "--engine", "spark-sql")));
    assertEquals(
        "overlap", EtlCommand.engine(JobArgs.parse("etl", "--engine", "overlap", "--input", "li")));
  }

  @Test
  void repeatIsOneByDefault() {
    assertEquals(1, EtlCommand.repeat(JobArgs.parse("etl")));
    assertEquals(3, EtlCommand.repeat(JobArgs.parse("etl", "--repeat", "3")));
  }
}
