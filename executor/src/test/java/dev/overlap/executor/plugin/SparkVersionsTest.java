package dev.overlap.executor.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Which Spark versions the plugin runs on, and the one line it gives on the others. */
class SparkVersionsTest {
  @ParameterizedTest
  @ValueSource(strings = {"4.0.4", "4.0.0", "4.1.3", "4.2.0", "4.1.0-databricks", "4.2.1-SNAPSHOT"})
  void theSupportedLinesRun(String version) {
    assertNull(SparkVersions.refusal(version));
  }

  @ParameterizedTest
  @ValueSource(strings = {"3.5.1", "3.5.8", "4.3.0", "5.0.0", "3.4"})
  void anotherLineIsRefusedInOneLineNamingItAndTheSupportedOnes(String version) {
    assertEquals(
        "Overlap supports Spark 4.0, 4.1 and 4.2; this is Spark "
            + version
            + ": the plugin stays off and Spark runs every query as without it",
        SparkVersions.refusal(version));
  }

  @Test
  void theSparkOfTheBuildIsSupported() {
    assertNull(SparkVersions.refusal(SparkVersions.running()));
  }
}
