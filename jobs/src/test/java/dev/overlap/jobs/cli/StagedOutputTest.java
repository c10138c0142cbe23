package dev.overlap.jobs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The staged replace and the recovery after a killed run, on the local file system. */
public class StagedOutputTest {
  @TempDir java.nio.file.Path tmp;
  FileSystem fs;
  java.nio.file.Path out;

  @BeforeEach
  void setUp() throws IOException {
    fs = FileSystem.getLocal(new Configuration());
    out = tmp.resolve("out");
  }

  private Path target() {
    return fs.makeQualified(new Path(out.toString()));
  }

  private void earlier(boolean marked) throws IOException {
    Files.createDirectories(out);
    Files.writeString(out.resolve("old.txt"), "earlier");
    if (marked) {
      Files.writeString(out.resolve(StagedOutput.MARKER), "job=etl\n");
    }
  }

  private List<String> besideOut() throws IOException {
    try (Stream<java.nio.file.Path> s = Files.list(tmp)) {
      return s.map(p -> p.getFileName().toString()).filter(n -> !n.equals("out")).sorted().toList();
    }
  }

  @Test
  void commitReplacesTheEarlierResultAndLeavesNothingBeside() throws IOException {
    earlier(true);
    try (StagedOutput staged = StagedOutput.begin(fs, target(), "etl")) {
      Files.writeString(java.nio.file.Path.of(staged.staging().toUri()).resolve("new.txt"), "new");
      assertEquals("earlier", Files.readString(out.resolve("old.txt")), "replaced too early");
      staged.commit();
    }
    assertEquals("new", Files.readString(out.resolve("new.txt")));
    assertFalse(Files.exists(out.resolve("old.txt")));
    assertTrue(Files.readString(out.resolve(StagedOutput.MARKER)).startsWith("job=etl\n"));
    assertEquals(List.of(), besideOut());
  }

  @Test
  void anAbandonedRunLeavesTheEarlierResultAndNoStagingFolder() throws IOException {
    earlier(true);
    try (StagedOutput staged = StagedOutput.begin(fs, target(), "etl")) {
      Files.writeString(java.nio.file.Path.of(staged.staging().toUri()).resolve("new.txt"), "new");
    }
    assertEquals("earlier", Files.readString(out.resolve("old.txt")));
    assertEquals(List.of(), besideOut());
  }

  @Test
  void recoverPutsBackAnEarlierResultMovedAsideByAKilledRun() throws IOException {
    earlier(true);
    Files.move(out, tmp.resolve(".out.overlap-previous-etl-somehost-12345"));
    StagedRecovery.recover(fs, target());
    assertEquals("earlier", Files.readString(out.resolve("old.txt")));
    assertEquals(List.of(), besideOut());
  }

  @Test
  void recoverNeverDeletesAnEarlierResultBesideAnIncompleteOutput() throws IOException {
    // What a replace that failed half way (a mount point) could leave: an empty output.
    Files.createDirectories(tmp.resolve(".out.overlap-previous-etl-somehost-12345"));
    Files.writeString(tmp.resolve(".out.overlap-previous-etl-somehost-12345/old.txt"), "earlier");
    Files.createDirectories(out);
    StagedRecovery.recover(fs, target());
    assertEquals(
        "earlier",
        Files.readString(tmp.resolve(".out.overlap-previous-etl-somehost-12345/old.txt")));
  }

  @Test
  void recoverLeavesNamesItDidNotGiveAndStagingOfLiveRuns() throws IOException {
    earlier(true);
    Files.writeString(tmp.resolve(".out.overlap-previous-notes"), "the user's own");
    Files.createDirectories(tmp.resolve(".out.overlap-x"));
    String live =
        ".out.overlap-staging-etl-otherhost-" + ProcessHandle.current().pid() + "-20261130-120000";
    Files.createDirectories(tmp.resolve(live));
    StagedRecovery.recover(fs, target());
    assertEquals(List.of(".out.overlap-previous-notes", live, ".out.overlap-x"), besideOut());
  }

  @Test
  void aMoveOntoAnExistingFolderFailsAndChangesNothing() throws IOException {
    earlier(true);
    java.nio.file.Path other = Files.createDirectories(tmp.resolve("other"));
    Files.writeString(other.resolve("x.txt"), "x");
    assertThrows(
        IOException.class,
        () -> StagedOutput.move(fs, fs.makeQualified(new Path(other.toString())), target()));
    assertEquals("x", Files.readString(other.resolve("x.txt")));
    assertEquals("earlier", Files.readString(out.resolve("old.txt")));
  }
}
