package dev.overlap.executor.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
        Optional.of("spark.overlap.enabled"),
        UnknownKeys.nearest("spark.overlap.pipeline.enabled"));
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

  private static final String STALL = GpuKeys.STALL_TIMEOUT.key();

  @Test
  void theStallTimeoutIsTenMinutesUnlessSetAndReadsAsSparkWritesDurations() {
    assertEquals("spark.overlap.gpu.stallTimeout", STALL);
    assertTrue(GpuKeys.STALL_TIMEOUT.startupOnly());
    assertEquals(Duration.ofMinutes(10), OverlapConf.defaults().get(GpuKeys.STALL_TIMEOUT));
    assertEquals(
        "spark.overlap.gpu.stallTimeout=10min", GpuKeys.stallBound(OverlapConf.defaults()));
    Map<String, Duration> written =
        Map.of(
            "90s", Duration.ofSeconds(90),
            "90", Duration.ofSeconds(90),
            "2m", Duration.ofMinutes(2),
            "15min", Duration.ofMinutes(15),
            "1h", Duration.ofHours(1),
            "1500ms", Duration.ofMillis(1500),
            " 2 D ", Duration.ofDays(2));
    written.forEach(
        (text, d) ->
            assertEquals(
                d, OverlapConf.fromMap(Map.of(STALL, text)).get(GpuKeys.STALL_TIMEOUT), text));
  }

  @Test
  void aStallTimeoutOfZeroOrNotADurationNamesTheKeyAndWhatItAccepts() {
    for (String bad : List.of("0ms", "10 weeks", "-1s", "soon", "", "99999999999999999999d")) {
      OverlapConfigException e =
          assertThrows(OverlapConfigException.class, () -> OverlapConf.fromMap(Map.of(STALL, bad)));
      assertEquals(STALL, e.key());
      assertTrue(e.getMessage().contains("(accepted: duration (e.g. 90s, 10min))"), e.getMessage());
    }
    OverlapConfigException zero =
        assertThrows(OverlapConfigException.class, () -> OverlapConf.fromMap(Map.of(STALL, "0")));
    assertTrue(zero.getMessage().contains("must be at least 1ms"), zero.getMessage());
  }

  @Test
  void durationsPrintInTheLargestWholeUnitAndReadBackTheSame() {
    Map<Duration, String> printed =
        Map.of(
            Duration.ofMinutes(10), "10min",
            Duration.ofSeconds(90), "90s",
            Duration.ofHours(2), "2h",
            Duration.ofDays(1), "1d",
            Duration.ofMillis(300), "300ms",
            Duration.ofMillis(1500), "1500ms");
    printed.forEach(
        (d, text) -> {
          assertEquals(text, DurationText.format(d));
          assertEquals(d, DurationText.parse(text));
        });
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
