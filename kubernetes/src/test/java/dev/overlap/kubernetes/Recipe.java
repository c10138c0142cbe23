package dev.overlap.kubernetes;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/** The Kubernetes recipe's files in conf/kubernetes/, read as Spark and Kubernetes read them. */
final class Recipe {
  /** The project folder (the build passes it; a run from this module's folder finds it too). */
  static final Path ROOT =
      Paths.get(System.getProperty("overlap.root", "..")).toAbsolutePath().normalize();

  static final Path DIR = ROOT.resolve("conf/kubernetes");
  static final Path DEFAULTS = DIR.resolve("spark-defaults.conf");
  static final Path DRIVER_TEMPLATE = DIR.resolve("driver-pod-template.yaml");
  static final Path EXECUTOR_TEMPLATE = DIR.resolve("executor-pod-template.yaml");
  static final Path APPLICATION = DIR.resolve("spark-application-etl.yaml");
  static final Path DOCKERFILE = DIR.resolve("Dockerfile");

  /** This build's version, which the image's jar names carry (the build passes it). */
  static final String VERSION = System.getProperty("overlap.version", "0.1.0-SNAPSHOT");

  /** Where the image holds Overlap's jars; spark.{driver,executor}.extraClassPath name it. */
  static final String JARS_DIR = "/opt/overlap/jars";

  /** The jobs' jar in the image, the primary resource of every submission. */
  static final String JOBS_JAR = "local://" + JARS_DIR + "/overlap-jobs-" + VERSION + ".jar";

  private Recipe() {}

  /**
   * spark-defaults.conf as spark-submit reads a properties file: {@link Properties#load}, values
   * trimmed (Spark's {@code Utils.getPropertiesFromFile}).
   */
  static Map<String, String> defaults() {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(DEFAULTS, StandardCharsets.UTF_8)) {
      p.load(r);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Map<String, String> out = new TreeMap<>();
    p.stringPropertyNames().forEach(k -> out.put(k, p.getProperty(k).trim()));
    return out;
  }

  /** A path in spark-defaults.conf, from the project folder as its comment says. */
  static Path fromRoot(String relative) {
    return ROOT.resolve(relative).normalize();
  }

  static Pod pod(Path yaml) {
    return read(yaml, Pod.class);
  }

  static GenericKubernetesResource resource(Path yaml) {
    return read(yaml, GenericKubernetesResource.class);
  }

  static String text(Path file) {
    try {
      return Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static <T> T read(Path yaml, Class<T> type) {
    try (InputStream in = Files.newInputStream(yaml)) {
      return Serialization.unmarshal(in, type);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
