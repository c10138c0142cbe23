package dev.overlap.executor.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.pipeline.StageRun;
import dev.overlap.executor.resource.TaskTag;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

/** The recorder and its two files, with made-up times: no pipeline, no GPU. */
class TraceRecorderTest {
  private static final long MS = 1_000_000;
  private static final TaskTag TASK = new TaskTag(5, 2, "stage 0 partition 2 task 5");

  /** Two batches of one task: packed on this thread, then through the three pipeline threads. */
  private static TraceRecorder twoBatches() throws Exception {
    TraceRecorder r = new TraceRecorder(1000 * MS, 100);
    Map<PipelineStage, ExecutorService> threads = new EnumMap<>(PipelineStage.class);
    try {
      for (int b = 0; b < 2; b++) {
        long t = 1000 * MS + b * 10 * MS;
        r.stageEnded(new StageRun(PipelineStage.PACK, TASK, b, 800, t), t + 4 * MS, true);
        on(threads, r, PipelineStage.UPLOAD, b, t + 4 * MS, t + 6 * MS);
        on(threads, r, PipelineStage.COMPUTE, b, t + 6 * MS, t + 12 * MS);
        on(threads, r, PipelineStage.DOWNLOAD, b, t + 12 * MS, t + 13 * MS);
      }
    } finally {
      threads.values().forEach(ExecutorService::shutdownNow);
    }
    return r;
  }

  /** Records a pipeline stage from its stage's own thread, as the pipeline does. */
  private static void on(
      Map<PipelineStage, ExecutorService> threads,
      TraceRecorder r,
      PipelineStage s,
      long batch,
      long start,
      long end)
      throws Exception {
    threads
        .computeIfAbsent(s, k -> Executors.newSingleThreadExecutor())
        .submit(() -> r.stageEnded(new StageRun(s, TASK, batch, 1024, start), end, true))
        .get();
  }

  @Test
  void eachDownloadThreadHasItsOwnTrack() throws Exception {
    TraceRecorder r = new TraceRecorder(1000 * MS, 100);
    for (int b = 0; b < 2; b++) {
      long t = 1000 * MS + b * MS;
      // Two download threads, their spans overlapping in time.
      Thread d =
          new Thread(
              () ->
                  r.stageEnded(
                      new StageRun(PipelineStage.DOWNLOAD, TASK, 0, 1, t), t + 5 * MS, true));
      d.start();
      d.join();
    }
    TraceRecorder.Timeline tl = r.timeline();
    assertEquals(
        List.of("upload thread", "compute thread", "download thread", "download thread 2"),
        tl.tracks().stream().map(TraceRecorder.Track::name).toList());
    assertEquals(
        List.of(tl.tracks().get(2).id(), tl.tracks().get(3).id()),
        tl.spans().stream().map(TraceRecorder.Span::track).toList());
  }

  @Test
  void eachComputeThreadHasItsOwnTrackBeforeTheDownloadThreads() throws Exception {
    TraceRecorder r = new TraceRecorder(1000 * MS, 100);
    for (PipelineStage s :
        List.of(
            PipelineStage.COMPUTE,
            PipelineStage.COMPUTE,
            PipelineStage.DOWNLOAD,
            PipelineStage.DOWNLOAD)) {
      long t = 1000 * MS;
      // Two threads of each stage, their spans overlapping in time.
      Thread d = new Thread(() -> r.stageEnded(new StageRun(s, TASK, 0, 1, t), t + 5 * MS, true));
      d.start();
      d.join();
    }
    TraceRecorder.Timeline tl = r.timeline();
    assertEquals(
        List.of(
            "upload thread",
            "compute thread",
            "compute thread 2",
            "download thread",
            "download thread 2"),
        tl.tracks().stream().map(TraceRecorder.Track::name).toList());
    assertEquals(
        tl.tracks().subList(1, 5).stream().map(TraceRecorder.Track::id).toList(),
        tl.spans().stream().map(TraceRecorder.Span::track).toList());
    assertEquals(5, tl.tracks().stream().map(TraceRecorder.Track::id).distinct().count());
  }

  @Test
  void theJsonHoldsOneCompleteEventPerSpanOnItsTrack() throws Exception {
    StringWriter w = new StringWriter();
    TraceOutput.writeJson(w, twoBatches().timeline(), 4321, "overlap executor 1");
    JsonNode root = new ObjectMapper().readTree(w.toString());
    JsonNode events = root.get("traceEvents");
    Map<Integer, String> threadNames = new HashMap<>();
    List<JsonNode> spans = new ArrayList<>();
    for (JsonNode e : events) {
      assertEquals(4321, e.get("pid").asLong());
      if (e.get("ph").asText().equals("M") && e.get("name").asText().equals("thread_name")) {
        threadNames.put(e.get("tid").asInt(), e.get("args").get("name").asText());
      } else if (e.get("ph").asText().equals("X")) {
        spans.add(e);
      }
    }
    assertEquals(
        List.of("task thread 1", "upload thread", "compute thread", "download thread"),
        List.copyOf(new java.util.TreeMap<>(threadNames).values()).stream()
            .sorted((a, b) -> order(a) - order(b))
            .toList());
    assertEquals(8, spans.size());
    JsonNode compute1 = spans.get(6);
    assertEquals("compute", compute1.get("name").asText());
    assertEquals("compute thread", threadNames.get(compute1.get("tid").asInt()));
    assertEquals(16_000.0, compute1.get("ts").asDouble(), 1e-9); // µs from the origin
    assertEquals(6_000.0, compute1.get("dur").asDouble(), 1e-9);
    assertEquals(5, compute1.get("args").get("task").asLong());
    assertEquals(2, compute1.get("args").get("partition").asInt());
    assertEquals(1, compute1.get("args").get("batch").asLong());
    assertEquals(1024, compute1.get("args").get("bytes").asLong());
    JsonNode pack0 = spans.get(0);
    assertEquals("pack", pack0.get("name").asText());
    assertEquals("task thread 1", threadNames.get(pack0.get("tid").asInt()));
    assertEquals(0.0, pack0.get("ts").asDouble(), 1e-9);
    assertEquals(800, pack0.get("args").get("bytes").asLong());
    assertFalse(root.get("otherData").has("note"));
  }

  private static int order(String track) {
    return List.of("task thread 1", "upload thread", "compute thread", "download thread")
        .indexOf(track);
  }

  @Test
  void theSvgIsWellFormedWithOneRectanglePerSpanAndATimeAxis() throws Exception {
    StringWriter w = new StringWriter();
    TraceSvg.write(w, twoBatches().timeline(), "overlap executor <1> & co");
    Document doc = parse(w.toString());
    assertEquals("svg", doc.getDocumentElement().getTagName());
    NodeList rects = doc.getElementsByTagName("rect");
    assertEquals(8, rects.getLength());
    for (int i = 0; i < rects.getLength(); i++) {
      Element r = (Element) rects.item(i);
      assertEquals("span", r.getAttribute("class"));
      assertTrue(Double.parseDouble(r.getAttribute("width")) > 0);
    }
    String text = doc.getDocumentElement().getTextContent();
    assertTrue(text.contains("seconds"), text);
    assertTrue(text.contains("compute thread"), text);
    assertTrue(text.contains("0.02"), "the axis reaches the end at 23 ms: " + text);
  }

  @Test
  void spansBeyondTheCapAreCountedAndNoted() throws Exception {
    TraceRecorder r = new TraceRecorder(0, 3);
    for (int b = 0; b < 5; b++) {
      r.stageEnded(new StageRun(PipelineStage.PACK, TASK, b, 1, b * MS), b * MS + 1, true);
    }
    TraceRecorder.Timeline t = r.timeline();
    assertEquals(3, t.spans().size());
    assertEquals(2, t.dropped());
    StringWriter w = new StringWriter();
    TraceOutput.writeJson(w, t, 1, "p");
    JsonNode root = new ObjectMapper().readTree(w.toString());
    assertTrue(root.get("otherData").get("note").asText().contains("capped at 3"));
    StringWriter svg = new StringWriter();
    TraceSvg.write(svg, t, "p");
    assertTrue(parse(svg.toString()).getDocumentElement().getTextContent().contains("capped"));
  }

  @Test
  void writeNamesBothFilesAfterTheExecutorAndTheProcess(@TempDir Path dir) throws Exception {
    List<Path> files = TraceOutput.write(twoBatches(), dir.resolve("sub"), "3", 99);
    assertEquals(
        List.of(
            dir.resolve("sub/overlap-trace-3-99.json"), dir.resolve("sub/overlap-trace-3-99.svg")),
        files);
    assertEquals(files, TraceFiles.written());
    assertEquals(files.get(1), TraceFiles.svg().orElseThrow());
    new ObjectMapper().readTree(Files.readString(files.get(0)));
    assertEquals(8, parse(Files.readString(files.get(1))).getElementsByTagName("rect").getLength());
  }

  @Test
  void anEmptyTimelineStillMakesValidFiles() throws Exception {
    TraceRecorder.Timeline t = new TraceRecorder(0, 10).timeline();
    StringWriter w = new StringWriter();
    TraceOutput.writeJson(w, t, 1, "p");
    new ObjectMapper().readTree(w.toString());
    StringWriter svg = new StringWriter();
    TraceSvg.write(svg, t, "p");
    Document doc = parse(svg.toString());
    assertEquals(0, doc.getElementsByTagName("rect").getLength());
    assertTrue(doc.getDocumentElement().getTextContent().contains("no spans"));
  }

  private static Document parse(String xml) throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setNamespaceAware(true);
    return f.newDocumentBuilder().parse(new InputSource(new StringReader(xml)));
  }
}
