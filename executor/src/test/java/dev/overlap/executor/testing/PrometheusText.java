package dev.overlap.executor.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.SparkContext;

/**
 * The Overlap plugin's metrics as Spark's Prometheus servlet sink serves them from the UI: a
 * session started with {@link #SINK_CONF} and the UI on. Names are the registry's, as the plugin
 * registers them ({@code gpu.fenced}), each with its value.
 */
public final class PrometheusText {
  /** The path the sink serves on. */
  public static final String PATH = "/metrics/prometheus";

  /** The settings that put the sink on the UI, as key and value pairs. */
  public static final String[] SINK_CONF = {
    "spark.ui.enabled", "true",
    "spark.ui.port", "0",
    "spark.metrics.conf.*.sink.prometheusServlet.class",
        "org.apache.spark.metrics.sink.PrometheusServlet",
    "spark.metrics.conf.*.sink.prometheusServlet.path", PATH
  };

  // metrics_<app>_<instance>_plugin_dev_overlap_executor_OverlapPlugin_<name>_Value{type="gauges"}
  // 3
  private static final Pattern LINE =
      Pattern.compile(
          "(?m)^metrics_\\S*?plugin_dev_overlap_executor_OverlapPlugin_(\\w+?)_(Value|Count)"
              + "\\{type=\"(gauges|counters)\"\\} (-?\\d+)$");

  private PrometheusText() {}

  /** The servlet's whole page. */
  public static String page(SparkContext sc) throws IOException, InterruptedException {
    String url = sc.uiWebUrl().get() + PATH;
    HttpResponse<String> r =
        HttpClient.newBuilder()
            .followRedirects(HttpClient.Redirect.NORMAL) // the UI adds the path's slash
            .build()
            .send(
                HttpRequest.newBuilder(URI.create(url)).build(),
                HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IOException(url + " answered " + r.statusCode());
    }
    return r.body();
  }

  /**
   * The plugin's gauges and counters on {@code page}, each by its Prometheus name ({@code
   * gpu_fenced}: the registry's name with every dot an underscore) and kind ({@code gauges} or
   * {@code counters}): {@code "gauges:gpu_fenced" -> 0}.
   */
  public static Map<String, Long> plugin(String page) {
    Map<String, Long> out = new HashMap<>();
    Matcher m = LINE.matcher(page);
    while (m.find()) {
      out.put(m.group(3) + ":" + m.group(1), Long.parseLong(m.group(4)));
    }
    return out;
  }

  /** The Prometheus name of a registry name: {@code gpu.fenced} is {@code gpu_fenced}. */
  public static String name(String registryName) {
    return registryName.replaceAll("[^a-zA-Z0-9]", "_");
  }
}
