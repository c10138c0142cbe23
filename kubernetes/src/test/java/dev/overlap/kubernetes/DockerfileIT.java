package dev.overlap.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/**
 * conf/kubernetes/Dockerfile checked without Docker, after {@code package} has made the jars it
 * copies: its base image is a build argument, it runs as Spark's user, every file it copies exists
 * in the build and is let through by its .dockerignore, and its paths are the ones spark-defaults
 * and the SparkApplication name.
 */
class DockerfileIT {
  private final Dockerfile docker = new Dockerfile(Recipe.text(Recipe.DOCKERFILE));
  private final Map<String, String> recipe = Recipe.defaults();

  @Test
  void baseImageIsABuildArgumentForCudasRelease() {
    Dockerfile.Instruction first = docker.instructions.get(0);
    assertEquals("ARG", first.keyword(), "the base image's ARG comes before FROM");
    assertTrue(first.args().startsWith("CUDA_IMAGE="), first.args());
    List<Dockerfile.Instruction> from = docker.all("FROM");
    assertEquals(1, from.size(), "one stage");
    assertEquals("${CUDA_IMAGE}", from.get(0).args());
    // cuDF's jar is built for one CUDA release (its classifier, cuda13): the image's must match.
    String classifier = System.getProperty("overlap.cudf.classifier", "cuda13");
    String major = classifier.replace("cuda", "");
    assertTrue(
        docker.argDefaults.get("CUDA_IMAGE").startsWith("nvidia/cuda:" + major + "."),
        "CUDA_IMAGE " + docker.argDefaults.get("CUDA_IMAGE") + " for cuDF's " + classifier);
  }

  @Test
  void runsAsSparksUserAfterEveryInstallStep() {
    int user = docker.indexOfLast("USER");
    assertTrue(user >= 0, "a USER instruction");
    assertEquals("185", docker.resolve(docker.instructions.get(user).args()));
    assertTrue(docker.indexOfLast("RUN") < user, "nothing runs as root after USER");
    assertTrue(docker.indexOfLast("COPY") < user, "nothing is copied after USER");
    assertEquals("[\"/opt/entrypoint.sh\"]", docker.all("ENTRYPOINT").get(0).args());
  }

  @Test
  void versionsAreThisBuilds() {
    assertEquals(
        System.getProperty("overlap.spark.version"), docker.argDefaults.get("SPARK_VERSION"));
    assertEquals(Recipe.VERSION, docker.argDefaults.get("OVERLAP_VERSION"));
    Map<String, Object> spec = spec();
    assertEquals(docker.argDefaults.get("SPARK_VERSION"), spec.get("sparkVersion"));
    assertEquals("overlap:" + Recipe.VERSION, recipe.get("spark.kubernetes.container.image"));
    assertTrue(
        docker.all("RUN").stream().anyMatch(r -> r.args().contains("openjdk-17-")), "JDK 17");
  }

  @Test
  void everyCopiedFileIsInTheBuildAndInTheContext() throws IOException {
    List<String> ignore = Files.readAllLines(Recipe.DIR.resolve("Dockerfile.dockerignore"));
    List<String> allowed = new ArrayList<>();
    for (String line : ignore) {
      if (line.startsWith("!")) {
        allowed.add(line.substring(1).replaceAll("/$", ""));
      }
    }
    assertTrue(ignore.contains("*"), "the context is what the ignore file lets through, no more");
    for (Dockerfile.Instruction copy : docker.all("COPY")) {
      String[] parts = docker.resolve(copy.args()).split("\\s+");
      assertEquals(2, parts.length, "COPY SRC DEST: " + copy.args());
      String source = parts[0].replaceAll("/$", "");
      Path path = Recipe.ROOT.resolve(source);
      assertTrue(Files.exists(path), "COPY " + source + ": not in the build (mvn package first)");
      if (Files.isDirectory(path)) {
        try (Stream<Path> files = Files.list(path)) {
          assertTrue(files.findAny().isPresent(), "COPY " + source + ": an empty folder");
        }
      }
      assertTrue(
          allowed.stream().anyMatch(p -> letThrough(p, source)),
          "COPY " + source + ": left out of the build context by Dockerfile.dockerignore");
    }
  }

  @Test
  void jarsLandWhereTheClassPathLooks() throws IOException {
    String classPath = recipe.get("spark.executor.extraClassPath");
    assertEquals(classPath, recipe.get("spark.driver.extraClassPath"));
    assertEquals(Recipe.JARS_DIR + "/*", classPath);
    List<String> jarCopies = new ArrayList<>();
    for (Dockerfile.Instruction copy : docker.all("COPY")) {
      String[] parts = docker.resolve(copy.args()).split("\\s+");
      if (parts[0].endsWith(".jar") || parts[0].endsWith("/")) {
        assertEquals(Recipe.JARS_DIR + "/", parts[1], "COPY " + parts[0]);
        jarCopies.add(parts[0]);
      }
    }
    assertTrue(jarCopies.contains("jobs/target/overlap-jobs-" + Recipe.VERSION + ".jar"));
    assertEquals(
        Recipe.JOBS_JAR, "local://" + Recipe.JARS_DIR + "/overlap-jobs-" + Recipe.VERSION + ".jar");
    // The plugin's class and cuDF's are in what is copied, so spark.plugins finds them.
    assertTrue(anyJarHolds(jarCopies, "dev/overlap/executor/OverlapPlugin.class"), "the plugin");
    assertTrue(anyJarHolds(jarCopies, "ai/rapids/cudf/Table.class"), "cuDF");
    assertTrue(anyJarHolds(jarCopies, "dev/overlap/jobs/Main.class"), "the jobs");
  }

  @Test
  void discoveryScriptIsWhereSparkDefaultsLooks() {
    String script = recipe.get("spark.executor.resource.gpu.discoveryScript");
    assertNotNull(script);
    Dockerfile.Instruction copy =
        docker.all("COPY").stream()
            .filter(c -> c.args().startsWith("conf/getGpusResources.sh "))
            .findFirst()
            .orElseThrow(() -> new AssertionError("the image copies no discovery script"));
    assertEquals(script, copy.args().split("\\s+")[1]);
    // COPY keeps the file's mode: Spark runs the script itself.
    assertTrue(Files.isExecutable(Recipe.ROOT.resolve("conf/getGpusResources.sh")));
    assertFalse(script.contains("$"), script);
  }

  private static boolean letThrough(String pattern, String source) {
    return source.equals(pattern)
        || source.startsWith(pattern + "/")
        || FileSystems.getDefault().getPathMatcher("glob:" + pattern).matches(Path.of(source));
  }

  private static boolean anyJarHolds(List<String> sources, String entry) throws IOException {
    for (String source : sources) {
      Path path = Recipe.ROOT.resolve(source);
      List<Path> jars;
      if (Files.isDirectory(path)) {
        try (Stream<Path> s = Files.list(path)) {
          jars = s.filter(p -> p.toString().endsWith(".jar")).toList();
        }
      } else {
        jars = List.of(path);
      }
      for (Path jar : jars) {
        try (ZipFile zip = new ZipFile(jar.toFile())) {
          if (zip.getEntry(entry) != null) {
            return true;
          }
        }
      }
    }
    return false;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> spec() {
    return (Map<String, Object>)
        Recipe.resource(Recipe.APPLICATION).getAdditionalProperties().get("spec");
  }
}
