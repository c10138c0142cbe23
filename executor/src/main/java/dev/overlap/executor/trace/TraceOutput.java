package dev.overlap.executor.trace;

import dev.overlap.executor.trace.TraceRecorder.Span;
import dev.overlap.executor.trace.TraceRecorder.Timeline;
import dev.overlap.executor.trace.TraceRecorder.Track;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Writes a {@link Timeline} into its two files: a Chrome trace-event file (JSON, {@code "X"}
 * complete events in microseconds, one thread per track; it opens in ui.perfetto.dev and
 * chrome://tracing), written here, and an SVG drawing ({@link TraceSvg}).
 */
public final class TraceOutput {
  private TraceOutput() {}

  /** An executor starts: {@link TraceFiles#written} forgets the files of an earlier one. */
  public static void executorStarting() {
    TraceFiles.set(List.of());
  }

  /**
   * Writes {@code overlap-trace-<executorId>-<pid>.json} and {@code .svg} into {@code dir} (made
   * when missing) and makes them what {@link TraceFiles#written} returns.
   */
  public static List<Path> write(TraceRecorder recorder, Path dir, String executorId, long pid)
      throws IOException {
    Timeline t = recorder.timeline();
    Files.createDirectories(dir);
    String base = "overlap-trace-" + executorId.replaceAll("[^A-Za-z0-9._-]", "_") + "-" + pid;
    Path json = dir.resolve(base + ".json");
    Path svg = dir.resolve(base + ".svg");
    String process = "overlap executor " + executorId;
    try (Writer w = Files.newBufferedWriter(json, StandardCharsets.UTF_8)) {
      writeJson(w, t, pid, process);
    }
    try (Writer w = Files.newBufferedWriter(svg, StandardCharsets.UTF_8)) {
      TraceSvg.write(w, t, process);
    }
    List<Path> files = List.of(json, svg);
    TraceFiles.set(files);
    return files;
  }

  /** The Chrome trace-event JSON of {@code t}. */
  public static void writeJson(Appendable out, Timeline t, long pid, String process)
      throws IOException {
    out.append("{\"otherData\":{\"source\":\"Overlap\"");
    out.append(",\"spans\":\"").append(Long.toString(t.spans().size())).append('"');
    if (t.dropped() > 0) {
      out.append(",\"note\":")
          .append(
              quote(
                  "capped at "
                      + t.maxSpans()
                      + " spans: the last "
                      + t.dropped()
                      + " were not recorded"));
    }
    out.append("},\n\"traceEvents\":[\n");
    out.append("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":")
        .append(Long.toString(pid))
        .append(",\"tid\":0,\"args\":{\"name\":")
        .append(quote(process))
        .append("}}");
    for (Track k : t.tracks()) {
      out.append(",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":")
          .append(Long.toString(pid))
          .append(",\"tid\":")
          .append(Integer.toString(k.id()))
          .append(",\"args\":{\"name\":")
          .append(quote(k.name()))
          .append("}}");
      out.append(",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":")
          .append(Long.toString(pid))
          .append(",\"tid\":")
          .append(Integer.toString(k.id()))
          .append(",\"args\":{\"sort_index\":")
          .append(Integer.toString(k.order()))
          .append("}}");
    }
    for (Span s : t.spans()) {
      out.append(",\n{\"ph\":\"X\",\"cat\":\"overlap\",\"name\":\"")
          .append(s.kind().label())
          .append("\",\"pid\":")
          .append(Long.toString(pid))
          .append(",\"tid\":")
          .append(Integer.toString(s.track()))
          .append(",\"ts\":")
          .append(micros(s.startNanos() - t.originNanos()))
          .append(",\"dur\":")
          .append(micros(s.endNanos() - s.startNanos()))
          .append(",\"args\":{\"task\":")
          .append(Long.toString(s.taskId()))
          .append(",\"partition\":")
          .append(Integer.toString(s.partition()))
          .append(",\"batch\":")
          .append(Long.toString(s.batch()))
          .append(",\"bytes\":")
          .append(Long.toString(s.bytes()))
          .append(",\"ok\":")
          .append(Boolean.toString(s.ok()))
          .append(",\"taskName\":")
          .append(quote(s.taskName()))
          .append("}}");
    }
    out.append("\n]}\n");
  }

  /** Nanoseconds as microseconds with three decimals. */
  static String micros(long nanos) {
    String sign = nanos < 0 ? "-" : "";
    long n = Math.abs(nanos);
    return sign + (n / 1000) + "." + String.format(Locale.ROOT, "%03d", n % 1000);
  }

  static String quote(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) {
            b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
