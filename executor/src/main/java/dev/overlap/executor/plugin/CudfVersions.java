package dev.overlap.executor.plugin;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

/** The cuDF releases on the executor's class path, against the one this project is built with. */
final class CudfVersions {
  /** The cuDF release this project is built against: the pom's {@code cudf.version}. */
  static final String CUDF_BUILT = "26.08.1";

  private CudfVersions() {}

  /**
   * One line when the cuDF versions on the class path differ from the one this project was built
   * against ({@code built}), as the RAPIDS jar carries its own cuDF; empty when they agree or
   * cannot be read.
   */
  public static Optional<String> cudfVersionLine(ClassLoader loader, String built) {
    List<String> found = new ArrayList<>();
    try {
      Enumeration<URL> urls = loader.getResources("cudf-java-version-info.properties");
      while (urls.hasMoreElements()) {
        Properties p = new Properties();
        try (InputStream in = urls.nextElement().openStream()) {
          p.load(in);
        }
        String v = p.getProperty("version");
        if (v != null && !found.contains(v.trim())) {
          found.add(v.trim());
        }
      }
      Properties rapids = new Properties();
      URL r = loader.getResource("rapids4spark-version-info.properties");
      if (r != null) {
        try (InputStream in = r.openStream()) {
          rapids.load(in);
        }
      }
      String rapidsCudf = rapids.getProperty("cudf_version");
      List<String> differ = new ArrayList<>();
      for (String v : found) {
        if (!sameRelease(v, built)) {
          differ.add("cuDF " + v + " on the class path");
        }
      }
      if (rapidsCudf != null && !sameRelease(rapidsCudf.trim(), built)) {
        differ.add(
            "the RAPIDS jar ("
                + rapids.getProperty("version", "?")
                + ") built with cuDF "
                + rapidsCudf);
      }
      if (differ.isEmpty()) {
        return Optional.empty();
      }
      return Optional.of(
          "Overlap was built against cuDF "
              + built
              + ", but found "
              + String.join(" and ", differ)
              + ": use the RAPIDS jar of the same cuDF release");
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /** Same major.minor (26.08.0 and 26.08.1 are one release line). */
  static boolean sameRelease(String a, String b) {
    String[] x = a.split("\\.");
    String[] y = b.split("\\.");
    return x.length >= 2 && y.length >= 2 && x[0].equals(y[0]) && x[1].equals(y[1]);
  }
}
