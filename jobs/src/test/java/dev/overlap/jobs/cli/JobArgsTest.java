package dev.overlap.jobs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/**
 * The command line's checks, one clear line for each mistake: of etl's {@code --engine} and {@code
 * --repeat} and generate's {@code --scale}, each job's own options ({@link JobCommand}) parsed
 * here. The values they give: {@code EtlCommandTest}, {@code GenerateCommandTest}.
 */
public class JobArgsTest {
  private static String refused(String... args) {
    return assertThrows(UsageException.class, () -> JobArgs.parse(args)).getMessage();
  }

  @Test
  void anUnknownEngineIsRefusedNamingTheEngines() {
    assertEquals(
        "--engine must be overlap or spark-sql, got 'gpu'", refused("etl", "--engine", "gpu"));
    assertEquals(
        "--engine must be overlap or spark-sql, got 'sparksql'; did you mean spark-sql?",
        refused("etl", "--engine", "sparksql"));
    assertEquals(
        "--engine must be overlap or spark-sql, got 'Spark-SQL'",
        refused("etl", "--output", "o", "--engine", "Spark-SQL"));
  }

  @Test
  void engineNeedsOneValue() {
    assertEquals("--engine needs a value, e.g. --engine spark-sql", refused("etl", "--engine"));
    assertEquals(
        "--engine needs a value, but the next argument is the option '--overwrite', e.g. --engine"
            + " spark-sql",
        refused("etl", "--engine", "--overwrite"));
    assertEquals(
        "--engine is given twice; give it once",
        refused("etl", "--engine", "overlap", "--engine", "spark-sql"));
  }

  @Test
  void engineIsEtlsOnly() {
    assertEquals(
        "--engine is not an option of features (it is one of etl); features takes --input,"
            + " --format, --version, --output, --vocabulary, --model, --save-model, --vector-col,"
            + " --vector-type, --fit-only, --keep-inputs, --overwrite,"
            + " --overwrite-unmarked",
        refused("features", "--engine", "spark-sql"));
    assertEquals(
        "--engine is not an option of generate (it is one of etl); generate takes --scale,"
            + " --output, --overwrite, --overwrite-unmarked",
        refused("generate", "--scale", "1", "--engine", "overlap"));
  }

  @Test
  void etlListsTheEngineAmongItsOptions() {
    assertEquals(
        "unknown option '--engin' for etl; did you mean --engine? etl takes --input, --format, --version, --output,"
            + " --engine, --repeat, --sql, --query, --table, --overwrite, --overwrite-unmarked",
        refused("etl", "--engin", "spark-sql"));
  }

  @Test
  void repeatIsAWholeNumberFromOneToAHundred() {
    assertEquals(
        "--repeat must be a whole number from 1 to 100, got '0'", refused("etl", "--repeat", "0"));
    assertEquals(
        "--repeat must be a whole number from 1 to 100, got 'x'", refused("etl", "--repeat", "x"));
    assertEquals("--repeat needs a value, e.g. --repeat 3", refused("etl", "--repeat"));
    assertEquals(
        "--repeat is not an option of features (it is one of etl); features takes --input,"
            + " --format, --version, --output, --vocabulary, --model, --save-model, --vector-col,"
            + " --vector-type, --fit-only, --keep-inputs, --overwrite,"
            + " --overwrite-unmarked",
        refused("features", "--repeat", "2"));
  }

  @Test
  void aScaleThatGivesNoRowsIsRefusedNamingTheSmallestThatDoes() {
    assertEquals(
        "--scale 1e-7 gives tables of 0 rows; the smallest scale that gives rows is 0.0000007"
            + " (SF 0.01 gives 15000 orders)",
        refused("generate", "--scale", "1e-7"));
    JobArgs.parse("generate", "--scale", "0.0000007");
  }
}
