package dev.overlap.executor.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class OverlapConfTest {
  @Test
  void theReadColumnFollowsHowAKeyIsDeclaredNotItsName() {
    ConfigEntry<Boolean> driver =
        ConfigEntry.builder(OverlapConf.PREFIX + "some.key").readAtDriverStart().booleanConf(true);
    assertTrue(driver.startupOnly());
    assertEquals("at driver start", ConfigDocs.read(driver));
    assertEquals(
        "at executor start",
        ConfigDocs.read(
            ConfigEntry.builder(OverlapConf.PREFIX + "driver.named")
                .startupOnly()
                .booleanConf(true)));
    assertEquals(
        "per job (session conf)",
        ConfigDocs.read(ConfigEntry.builder(OverlapConf.PREFIX + "other.key").booleanConf(true)));
  }

  /** The convention configs.md states: the driver's keys, and only they, are under driver. */
  @Test
  void theKeysUnderDriverAreTheKeysTheDriverReadsAtItsStart() {
    for (ConfigEntry<?> e : OverlapConf.ALL) {
      assertEquals(e.key().startsWith(OverlapConf.PREFIX + "driver."), e.driverStart(), e.key());
    }
  }

  @Test
  void defaultsParse() {
    OverlapConf c = OverlapConf.defaults();
    assertEquals(128L << 20, c.get(OverlapConf.STAGING_BUFFER_SIZE));
    assertEquals(NoGpuMode.CPU, c.get(OverlapConf.NO_GPU_MODE));
  }

  @Test
  void sizesAndEnumsAreParsedAsSparkWritesThem() {
    OverlapConf c =
        OverlapConf.fromMap(
            Map.of(
                "spark.overlap.prefetch.maxBytes", "2g",
                "spark.overlap.staging.bufferSize", "64MB",
                "spark.overlap.noGpu.mode", "fail"));
    assertEquals(2L << 30, c.get(OverlapConf.PREFETCH_MAX_BYTES));
    assertEquals(64L << 20, c.get(OverlapConf.STAGING_BUFFER_SIZE));
    assertEquals(NoGpuMode.FAIL, c.get(OverlapConf.NO_GPU_MODE));
  }

  @Test
  void aNegativeSizeNamesTheKey() {
    OverlapConfigException e =
        assertThrows(
            OverlapConfigException.class,
            () -> OverlapConf.fromMap(Map.of("spark.overlap.prefetch.maxBytes", "-1g")));
    assertEquals("spark.overlap.prefetch.maxBytes", e.key());
    assertTrue(e.getMessage().contains("spark.overlap.prefetch.maxBytes"), e.getMessage());
    assertTrue(e.getMessage().contains("'-1g'"), e.getMessage());
  }

  @Test
  void anUnknownEnumNameListsTheAllowedValues() {
    OverlapConfigException e =
        assertThrows(
            OverlapConfigException.class,
            () -> OverlapConf.fromMap(Map.of("spark.overlap.noGpu.mode", "gpu-please")));
    assertTrue(e.getMessage().contains("spark.overlap.noGpu.mode"), e.getMessage());
    assertTrue(e.getMessage().contains("one of CPU, FAIL"), e.getMessage());
  }

  @Test
  void outOfRangeNumbersAreRejected() {
    assertThrows(
        OverlapConfigException.class,
        () -> OverlapConf.fromMap(Map.of("spark.overlap.rmm.poolFraction", "1.5")));
    assertThrows(
        OverlapConfigException.class,
        () -> OverlapConf.fromMap(Map.of("spark.overlap.staging.buffers", "0")));
    assertThrows(
        OverlapConfigException.class,
        () -> OverlapConf.fromMap(Map.of("spark.overlap.enabled", "yes")));
  }

  @Test
  void anUnknownKeyNamesTheNearestKnownOne() {
    OverlapConfigException e =
        assertThrows(
            OverlapConfigException.class,
            () ->
                UnknownKeys.check(
                    List.of(
                        "spark.executor.memory",
                        "spark.overlap.staging.buffers",
                        "spark.overlap.prefetch.maxByte")));
    assertEquals(
        "unknown config key 'spark.overlap.prefetch.maxByte'; did you mean"
            + " 'spark.overlap.prefetch.maxBytes'? (every key: docs/configs.md)",
        e.getMessage());
    assertEquals("spark.overlap.prefetch.maxByte", e.key());
  }

  @Test
  void suggestionsCoverTyposCaseAndAMisplacedSegment() {
    assertEquals(
        Optional.of("spark.overlap.noGpu.mode"), UnknownKeys.nearest("spark.overlap.nogpu.mode"));
    assertEquals(
        Optional.of("spark.overlap.staging.buffers"),
        UnknownKeys.nearest("spark.overlap.stagingBuffers"));
    assertEquals(
        Optional.of("spark.overlap.batch.maxRows"),
        UnknownKeys.nearest("spark.overlap.batch.maxRow"));
    assertEquals(
        Optional.of("spark.overlap.enabled"), UnknownKeys.nearest("spark.overlap.gpu.enabled"));
    assertEquals(Optional.empty(), UnknownKeys.nearest("spark.overlap.shuffle.compression"));
  }

  @Test
  void aKeyFarFromEveryKnownOneIsNamedWithoutASuggestion() {
    OverlapConfigException e =
        assertThrows(
            OverlapConfigException.class,
            () -> UnknownKeys.check(List.of("spark.overlap.shuffle.compression")));
    assertEquals(
        "unknown config key 'spark.overlap.shuffle.compression' (every key: docs/configs.md)",
        e.getMessage());
  }

  @Test
  void knownKeysAndOtherPrefixesPass() {
    List<String> keys = new java.util.ArrayList<>();
    for (ConfigEntry<?> c : OverlapConf.ALL) {
      keys.add(c.key());
    }
    keys.add("spark.overlapping.thing");
    keys.add("spark.rapids.sql.enabled");
    UnknownKeys.check(keys);
  }

  @Test
  void everyKeyIsUniqueAndPrefixed() {
    Set<String> seen = new HashSet<>();
    for (ConfigEntry<?> e : OverlapConf.ALL) {
      assertTrue(e.key().startsWith("spark.overlap."), e.key());
      assertTrue(seen.add(e.key()), "duplicate " + e.key());
      assertTrue(!e.doc().isBlank(), e.key() + " has no doc");
    }
  }

  @Test
  void docsConfigsMdIsUpToDate() throws Exception {
    Path doc = Path.of("..", "docs", "configs.md");
    String current = Files.readString(doc, StandardCharsets.UTF_8);
    assertEquals(
        ConfigDocs.render(current),
        current,
        "docs/configs.md is stale: run the generator (see docs/configs.md)");
  }
}
