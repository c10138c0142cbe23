package dev.overlap.executor.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CudfVersionsTest {
  private static ClassLoader withVersions(Path dir, String cudf, String rapidsCudf)
      throws Exception {
    Files.writeString(dir.resolve("cudf-java-version-info.properties"), "version=" + cudf + "\n");
    if (rapidsCudf != null) {
      Files.writeString(
          dir.resolve("rapids4spark-version-info.properties"),
          "version=26.08.1\ncudf_version=" + rapidsCudf + "\n");
    }
    return new URLClassLoader(new URL[] {dir.toUri().toURL()}, null);
  }

  @Test
  void aCudfOfAnotherReleaseIsOneLine(@TempDir Path dir) throws Exception {
    Path same = Files.createDirectory(dir.resolve("same"));
    assertEquals(
        Optional.empty(),
        CudfVersions.cudfVersionLine(withVersions(same, "26.08.0", "26.08.0"), "26.08.1"));
    Path other = Files.createDirectory(dir.resolve("other"));
    String line =
        CudfVersions.cudfVersionLine(withVersions(other, "26.10.0", "26.10.0"), "26.08.1")
            .orElseThrow();
    assertTrue(
        line.startsWith("Overlap was built against cuDF 26.08.1, but found cuDF 26.10.0"), line);
    assertTrue(line.contains("built with cuDF 26.10.0"), line);
    assertTrue(CudfVersions.sameRelease("26.08.0", "26.08.1"));
    assertFalse(CudfVersions.sameRelease("26.10.0", "26.08.1"));
  }

  @Test
  void theBuiltVersionIsThePomsCudfVersion() throws Exception {
    Path pom = Path.of("..", "pom.xml");
    String text = Files.readString(pom);
    assertTrue(
        text.contains("<cudf.version>" + CudfVersions.CUDF_BUILT + "</cudf.version>"),
        "CudfVersions.CUDF_BUILT differs from the pom's cudf.version");
  }
}
