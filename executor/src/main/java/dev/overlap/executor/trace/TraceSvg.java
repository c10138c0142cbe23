package dev.overlap.executor.trace;

import dev.overlap.executor.trace.TraceRecorder.Span;
import dev.overlap.executor.trace.TraceRecorder.Timeline;
import dev.overlap.executor.trace.TraceRecorder.Track;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Draws a {@link Timeline} as SVG: a row per track, a rectangle per span coloured by its {@link
 * SpanKind}, a time axis in seconds from the first span.
 */
public final class TraceSvg {
  /** The most spans drawn; the JSON holds them all. */
  public static final int MAX_SPANS = 200_000;

  private static final int WIDTH = 1400;
  private static final int LABEL = 160;
  private static final int ROW = 22;
  private static final int TOP = 46;

  private TraceSvg() {}

  /** An SVG drawing of {@code t}: a row per track, a {@code rect} of class "span" per span. */
  public static void write(Appendable out, Timeline t, String title) throws IOException {
    List<Span> spans = t.spans();
    int drawn = Math.min(spans.size(), MAX_SPANS);
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
    for (SpanKind k : SpanKind.values()) {
      out.append("<text x=\"")
          .append(Integer.toString(lx))
          .append("\" y=\"36\" fill=\"")
          .append(k.color())
          .append("\" font-weight=\"bold\">\u25a0 ")
          .append(k.label())
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
      note += "no spans recorded.";
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
      String rule = Integer.toString(y + ROW);
      line(out, Integer.toString(LABEL), Integer.toString(WIDTH - 20), rule, rule, "#eee");
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
          .append(s.kind().color())
          .append(s.ok() ? "\"" : "\" stroke=\"#d00\"")
          .append("><title>")
          .append(s.kind().label())
          .append(" task ")
          .append(Long.toString(s.taskId()))
          .append(
              s.kind() == SpanKind.CPU
                  ? " partition " + s.partition()
                  : " batch " + s.batch() + ", " + s.bytes() + " bytes")
          .append(", ")
          .append(fmt((s.endNanos() - s.startNanos()) / 1e6))
          .append(" ms</title></rect>\n");
    }
    // The axis: seconds from the first span.
    String axis = Integer.toString(axisY);
    line(out, Integer.toString(LABEL), Integer.toString(WIDTH - 20), axis, axis, "#000");
    double seconds = total / 1e9;
    double step = niceStep(seconds / 8);
    for (int k = 0; k * step <= seconds * 1.0000001; k++) {
      double x = LABEL + k * step / seconds * plot;
      line(out, fmt(x), fmt(x), axis, Integer.toString(axisY + 5), "#000");
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

  /** One SVG line from ({@code x1}, {@code y1}) to ({@code x2}, {@code y2}). */
  private static void line(
      Appendable out, String x1, String x2, String y1, String y2, String stroke)
      throws IOException {
    out.append("<line x1=\"")
        .append(x1)
        .append("\" x2=\"")
        .append(x2)
        .append("\" y1=\"")
        .append(y1)
        .append("\" y2=\"")
        .append(y2)
        .append("\" stroke=\"")
        .append(stroke)
        .append("\"/>\n");
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
