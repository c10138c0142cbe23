package dev.overlap.jobs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.overlap.executor.api.JobSummaryEvent;
import dev.overlap.jobs.TestSessions;
import dev.overlap.jobs.etl.TestEtl;
import dev.overlap.jobs.tpch.TpchGenerate;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.util.JsonProtocol;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The job summary in Spark's event log: etl on the CPU path in a session that writes one, the
 * summary's event found among the log's JSON lines with the figures of the stage accumulators that
 * the same log holds, and read back as the History Server reads events.
 */
class SummaryEventTest {
  @TempDir Path tmp;

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void etlsSummaryIsInTheEventLogWithTheStagesFigures() throws Exception {
    Path logs = Files.createDirectories(tmp.resolve("events"));
    SparkSession spark =
        TestSessions.withPlugin(
            "local[2]",
            "spark.overlap.enabled",
            "false",
            "spark.sql.shuffle.partitions",
            "2",
            "spark.eventLog.enabled",
            "true",
            "spark.eventLog.dir",
            logs.toUri().toString(),
            "spark.eventLog.compress",
            "false",
            "spark.eventLog.rolling.enabled",
            "false");
    String text;
    try {
      String data = tmp.resolve("tpch").toString();
      TpchGenerate.run(
          spark,
          0.001,
          data,
          new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
          false);
      JobSummary summary = new JobSummary("etl");
      long rows = TestEtl.run(spark, data + "/lineitem", tmp.resolve("etl").toString(), summary);
      text = summary.finish(spark, rows, 2);
    } finally {
      spark.stop(); // the log is complete once the session has stopped
    }

    List<JsonNode> events = new ArrayList<>();
    try (Stream<Path> files = Files.list(logs)) {
      for (Path f : files.toList()) {
        for (String line : Files.readAllLines(f)) {
          events.add(JSON.readTree(line));
        }
      }
    }
    List<JsonNode> summaries =
        events.stream()
            .filter(e -> JobSummaryEvent.class.getName().equals(e.path("Event").asText()))
            .toList();
    assertEquals(1, summaries.size(), "summary events in the log");
    JsonNode event = summaries.get(0);
    assertEquals("etl", event.get("job").asText());
    assertEquals(text, event.get("text").asText());
    assertTrue(event.get("path").asText().startsWith("CPU"), event.toString());

    // The kernels' stages, as the log keeps them: Q1's, then Q6's.
    List<JsonNode> kernelStages =
        events.stream()
            .filter(e -> "SparkListenerStageCompleted".equals(e.path("Event").asText()))
            .filter(e -> accumulable(e, "overlap.tasks.cpu") >= 0)
            .toList();
    JsonNode steps = event.get("steps");
    assertEquals(2, steps.size(), event.toString());
    assertEquals(2, kernelStages.size(), "stages showing the kernels' accumulators");
    for (int i = 0; i < 2; i++) {
      JsonNode step = steps.get(i);
      JsonNode stage = kernelStages.get(i);
      assertEquals(i == 0 ? "Q1" : "Q6", step.get("name").asText());
      assertEquals(step.get("cpuTasks").asLong(), accumulable(stage, "overlap.tasks.cpu"));
      assertEquals(step.get("rowsIn").asLong(), accumulable(stage, "overlap.rows.in"));
      assertEquals(step.get("rowsOut").asLong(), accumulable(stage, "overlap.rows.out"));
      assertEquals(step.get("cpuKernelMs").asLong(), accumulable(stage, "overlap.cpuKernel.ms"));
      assertEquals(0, step.get("gpuTasks").asLong());
      assertTrue(step.get("rowsIn").asLong() > 0, step.toString());
    }

    // As the History Server replays it: Spark's own reader gives the event back, figures and all.
    SparkListenerEvent replayed = JsonProtocol.sparkEventFromJson(event.toString());
    JobSummaryEvent back = (JobSummaryEvent) replayed;
    assertEquals(text, back.text());
    assertEquals(steps.get(0).get("cpuKernelMs").asLong(), back.steps().get(0).cpuKernelMs());
    assertEquals(event.get("rowsIn").asLong(), back.rowsIn());
  }

  /** The value a logged stage's accumulator {@code name} had; -1 when the stage has none. */
  private static long accumulable(JsonNode stageCompleted, String name) {
    for (JsonNode a : stageCompleted.path("Stage Info").path("Accumulables")) {
      if (name.equals(a.path("Name").asText())) {
        return Long.parseLong(a.path("Value").asText());
      }
    }
    return -1;
  }
}
