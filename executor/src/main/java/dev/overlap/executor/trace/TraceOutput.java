package dev.overlap.executor.trace;

import dev.overlap.executor.pipeline.Stage;
import dev.overlap.executor.trace.TraceRecorder.Span;
import dev.overlap.executor.trace.TraceRecorder.Timeline;
import dev.overlap.executor.trace.TraceRecorder.Track;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes a {@link Timeline} as a Chrome trace-event file (JSON, {@code "X"} complete events in
 * microseconds, one thread per track; it opens in ui.perfetto.dev and chrome://tracing) and as an
 * SVG drawing (a row per track, a rectangle per span, a time axis in seconds).
 */
public final class TraceOutput {
  /** The most spans drawn in the SVG; the JSON holds them all. */
  public static final int MAX_SVG_SPANS = 200_000;

  private static final int WIDTH = 1400;
  private static final int LABEL = 160;
  private static final int ROW = 22;
  private static final int TOP = 46;

  private TraceOutput() {}

  /** An executor starts: {@link TraceFiles#written} forgets the files of an earlier one. */
  public static void executorStarting() {
    TraceFiles.set(List.of());
  }

  /** The stage's name in the files. */
  public static String name(Stage s) {
    return s.name().toLowerCase(Locale.ROOT);
  }

  static String color(Stage s) {
    return switch (s) {
      case PACK -> "#e0a800";
      case UPLOAD -> "#1f77b4";
      case COMPUTE -> "#2ca02c";
      case DOWNLOAD -> "#9467bd";
    };
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
      writeSvg(w, t, process);
    }
    List<Path> files = List.of(json, svg);
    TraceFiles.set(files);
    return files;
  }

  /** The Chrome trace-event JSON of {@code t}. */
  public static void writeJson(Appendable out, Timeline t, long pid, String process)
      throws IOException {
    out.append("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"source\":\"Overlap\"");
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
          .append(name(s.stage()))
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

  /** An SVG drawing of {@code t}: a row per track, a {@code rect} of class "span" per span. */
  public static void writeSvg(Appendable out, Timeline t, String title) throws IOException {
    List<Span> spans = t.spans();
    int drawn = Math.min(spans.size(), MAX_SVG_SPANS);
    long t0 = Long.MAX_VALUE;
    long t1 = Long.MIN_VALUE;
    for (int i = 0; i < drawn; i++) {
      t0 = Math.min(t0, spans.get(i).startNanos());
      t1 = Math.max(t1, spans.get(i).endNanos());
    }
    if (drawn == 0) {
      t0 = 0;
      t1 = 1;
    }
    double total = Math.max(1, t1 - t0);
    Map<Integer, Integer> rowOf = new HashMap<>();
    List<Track> tracks = t.tracks();
    for (int i = 0; i < tracks.size(); i++) {
      rowOf.put(tracks.get(i).id(), i);
    }
    double plot = WIDTH - LABEL - 20;
    int axisY = TOP + tracks.size() * ROW + 6;
    int height = axisY + 40;
    out.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"")
        .append(Integer.toString(WIDTH))
        .append("\" height=\"")
        .append(Integer.toString(height))
        .append("\" font-family=\"sans-serif\" font-size=\"12\">\n");
    out.append("<text x=\"8\" y=\"18\" font-size=\"14\">")
        .append(xml(title))
        .append(": ")
        .append(Integer.toString(spans.size()))
        .append(" spans")
        .append("</text>\n");
    int lx = LABEL;
    for (Stage s : Stage.values()) {
      out.append("<text x=\"")
          .append(Integer.toString(lx))
          .append("\" y=\"36\" fill=\"")
          .append(color(s))
          .append("\" font-weight=\"bold\">\u25a0 ")
          .append(name(s))
          .append("</text>\n");
      lx += 110;
    }
    String note = "";
    if (t.dropped() > 0) {
      note = "capped at " + t.maxSpans() + " spans; " + t.dropped() + " not recorded. ";
    }
    if (drawn < spans.size()) {
      note += "drawing the first " + drawn + " spans; the JSON file holds all. ";
    }
    if (spans.isEmpty()) {
      note += "no spans recorded (spans come from the GPU path only).";
    }
    if (!note.isEmpty()) {
      out.append("<text x=\"")
          .append(Integer.toString(lx + 20))
          .append("\" y=\"36\" fill=\"#b00\">")
          .append(xml(note.trim()))
          .append("</text>\n");
    }
    for (int i = 0; i < tracks.size(); i++) {
      int y = TOP + i * ROW;
      out.append("<text x=\"8\" y=\"")
          .append(Integer.toString(y + ROW - 7))
          .append("\">")
          .append(xml(tracks.get(i).name()))
          .append("</text>\n");
      out.append("<line x1=\"")
          .append(Integer.toString(LABEL))
          .append("\" x2=\"")
          .append(Integer.toString(WIDTH - 20))
          .append("\" y1=\"")
          .append(Integer.toString(y + ROW))
          .append("\" y2=\"")
          .append(Integer.toString(y + ROW))
          .append("\" stroke=\"#eee\"/>\n");
    }
    for (int i = 0; i < drawn; i++) {
      Span s = spans.get(i);
      Integer row = rowOf.get(s.track());
      if (row == null) {
        continue;
      }
      double x = LABEL + (s.startNanos() - t0) / total * plot;
      double w = Math.max(0.3, (s.endNanos() - s.startNanos()) / total * plot);
      out.append("<rect class=\"span\" x=\"")
          .append(fmt(x))
          .append("\" y=\"")
          .append(Integer.toString(TOP + row * ROW + 2))
          .append("\" width=\"")
          .append(fmt(w))
          .append("\" height=\"")
          .append(Integer.toString(ROW - 4))
          .append("\" fill=\"")
          .append(color(s.stage()))
          .append(s.ok() ? "\"" : "\" stroke=\"#d00\"")
          .append("><title>")
          .append(name(s.stage()))
          .append(" task ")
          .append(Long.toString(s.taskId()))
          .append(" batch ")
          .append(Long.toString(s.batch()))
          .append(", ")
          .append(Long.toString(s.bytes()))
          .append(" bytes, ")
          .append(fmt((s.endNanos() - s.startNanos()) / 1e6))
          .append(" ms</title></rect>\n");
    }
    // The axis: seconds from the first span.
    out.append("<line x1=\"")
        .append(Integer.toString(LABEL))
        .append("\" x2=\"")
        .append(Integer.toString(WIDTH - 20))
        .append("\" y1=\"")
        .append(Integer.toString(axisY))
        .append("\" y2=\"")
        .append(Integer.toString(axisY))
        .append("\" stroke=\"#000\"/>\n");
    double seconds = total / 1e9;
    double step = niceStep(seconds / 8);
    for (int k = 0; k * step <= seconds * 1.0000001; k++) {
      double x = LABEL + k * step / seconds * plot;
      out.append("<line x1=\"")
          .append(fmt(x))
          .append("\" x2=\"")
          .append(fmt(x))
          .append("\" y1=\"")
          .append(Integer.toString(axisY))
          .append("\" y2=\"")
          .append(Integer.toString(axisY + 5))
          .append("\" stroke=\"#000\"/>\n");
      out.append("<text x=\"")
          .append(fmt(x))
          .append("\" y=\"")
          .append(Integer.toString(axisY + 18))
          .append("\" text-anchor=\"middle\">")
          .append(trim(k * step))
          .append("</text>\n");
    }
    out.append("<text x=\"8\" y=\"")
        .append(Integer.toString(axisY + 18))
        .append("\">seconds</text>\n");
    out.append("</svg>\n");
  }

  /** 1, 2 or 5 times a power of ten, at least {@code raw}. */
  static double niceStep(double raw) {
    if (!(raw > 0)) {
      return 1;
    }
    double p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (double m : new double[] {1, 2, 5, 10}) {
      if (m * p >= raw) {
        return m * p;
      }
    }
    return 10 * p;
  }

  private static String trim(double v) {
    String s = String.format(Locale.ROOT, "%.6f", v);
    s = s.replaceAll("0+$", "");
    return s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
  }

  private static String fmt(double v) {
    return String.format(Locale.ROOT, "%.2f", v);
  }

  static String xml(String s) {
    return s.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\"", "&quot;")
        .replace("'", "&apos;");
  }
}
