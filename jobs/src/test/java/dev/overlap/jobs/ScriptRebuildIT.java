package dev.overlap.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * spark-submit.sh rebuilds a checkout whose sources changed since its jars were built, once: each
 * in a checkout of its own, with an mvn that only records its call.
 */
public class ScriptRebuildIT {
  @TempDir Path tmp;

  @Test
  void aSourceEditedSinceTheBuildIsRebuilt() throws Exception {
    // A checkout whose jars are older than one of its sources, with an mvn that records its call.
    Path checkout = Files.createDirectories(tmp.resolve("checkout"));
    Files.copy(Shell.ROOT.resolve("spark-submit.sh"), checkout.resolve("spark-submit.sh"));
    Path target = Files.createDirectories(checkout.resolve("jobs/target/lib"));
    Path jar = Files.writeString(checkout.resolve("jobs/target/overlap-jobs-0.jar"), "");
    Files.writeString(checkout.resolve("jobs/target/spark-classpath.txt"), "");
    Path source = Files.createDirectories(checkout.resolve("jobs/src/main/java"));
    Files.writeString(source.resolve("Edited.java"), "class Edited {}");
    Files.setLastModifiedTime(jar, java.nio.file.attribute.FileTime.fromMillis(1_000_000L));
    Path bin = Files.createDirectories(tmp.resolve("bin"));
    Path mvn = bin.resolve("mvn");
    Files.writeString(
        mvn, "#!/bin/sh\necho called > " + tmp.resolve("mvn-called") + "\necho '[ERROR] no'\n");
    Files.setPosixFilePermissions(mvn, PosixFilePermissions.fromString("rwxr-xr-x"));
    Shell.Result r =
        Shell.run(
            List.of("/bin/bash", checkout.resolve("spark-submit.sh").toString(), "etl"),
            Map.of("PATH", bin + ":" + System.getenv("PATH")),
            tmp,
            60);
    assertTrue(
        r.output()
            .contains(
                "spark-submit.sh: jobs/src/main/java/Edited.java changed since the last build:"
                    + " rebuilding"),
        r.output());
    assertTrue(Files.exists(tmp.resolve("mvn-called")), "mvn was not run");
    assertEquals(2, r.exitCode(), r.output());
    assertTrue(r.output().contains("spark-submit.sh: the build failed"), r.output());
    assertTrue(Files.isDirectory(target));
  }

  @Test
  void anEditOutsideTheJobsModuleIsRebuiltOnceNotOnEveryRun() throws Exception {
    // Maven leaves the jobs jar as it was when only executor/ changed: the script must remember
    // its own build, or it rebuilds on every run from then on. An mvn that succeeds and writes
    // nothing, as Maven does for the jobs jar then.
    Path checkout = Files.createDirectories(tmp.resolve("checkout-executor-edit"));
    Files.copy(Shell.ROOT.resolve("spark-submit.sh"), checkout.resolve("spark-submit.sh"));
    Files.createDirectories(checkout.resolve("jobs/target/lib"));
    Path jar = Files.writeString(checkout.resolve("jobs/target/overlap-jobs-0.jar"), "");
    Files.writeString(checkout.resolve("jobs/target/spark-classpath.txt"), "");
    Path source =
        Files.writeString(
            Files.createDirectories(checkout.resolve("executor/src/main/java"))
                .resolve("Edited.java"),
            "class Edited {}");
    Files.setLastModifiedTime(jar, java.nio.file.attribute.FileTime.fromMillis(1_000_000L));
    Path called = tmp.resolve("mvn-called-executor-edit");
    Path bin = Files.createDirectories(tmp.resolve("bin-success"));
    Files.writeString(
        bin.resolve("mvn"),
        "#!/bin/sh\necho called >> " + called + "\necho '[INFO] BUILD SUCCESS'\n");
    Files.setPosixFilePermissions(bin.resolve("mvn"), PosixFilePermissions.fromString("rwxr-xr-x"));
    List<String> etl = List.of("/bin/bash", checkout.resolve("spark-submit.sh").toString(), "etl");
    Map<String, String> env = Map.of("PATH", bin + ":" + System.getenv("PATH"));
    String rebuilding =
        "spark-submit.sh: executor/src/main/java/Edited.java changed since the last build:"
            + " rebuilding";
    Shell.Result first = Shell.run(etl, env, tmp, 60);
    assertTrue(first.output().contains(rebuilding), first.output());
    assertEquals(1, Files.readAllLines(called).size(), first.output());
    Shell.Result second = Shell.run(etl, env, tmp, 60);
    assertFalse(second.output().contains("rebuilding"), second.output());
    assertEquals(1, Files.readAllLines(called).size(), "built again:\n" + second.output());
    // A later edit is still seen.
    Files.setLastModifiedTime(
        source, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 10_000));
    Shell.Result third = Shell.run(etl, env, tmp, 60);
    assertTrue(third.output().contains(rebuilding), third.output());
    assertEquals(2, Files.readAllLines(called).size(), third.output());
  }
}
