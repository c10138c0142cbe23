package dev.overlap.jobs.cli;

import java.io.IOException;
import java.util.Arrays;
import java.util.regex.Pattern;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts right what a run that was killed left beside its output: the staging folders and the earlier
 * result moved aside that {@link StagedOutput} names. Only names of that form are touched.
 */
public final class StagedRecovery {
  private static final Logger LOG = LoggerFactory.getLogger(StagedRecovery.class);

  /**
   * What follows {@code .<target>} in the names {@link StagedOutput} gives: job, host, pid (and
   * time).
   */
  private static final Pattern LEFTOVER =
      Pattern.compile(
          "\\.overlap-(staging|previous)-(generate|etl|features)-[A-Za-z0-9._]+-[0-9]+(-[0-9]{8}-[0-9]{6})?");

  private StagedRecovery() {}

  /**
   * Puts right what a killed run left beside {@code target}: an earlier result moved aside during a
   * replace goes back when the target is missing, and is deleted only when a complete output (with
   * its marker) is in place, the replace having finished; staging folders of runs that are no
   * longer alive are deleted. A staging folder of a process that still runs on this host, or of
   * another host, is left alone.
   */
  public static void recover(FileSystem fs, Path target) throws IOException {
    Path parent = target.getParent();
    if (parent == null || !fs.isDirectory(parent)) {
      return;
    }
    String prefix = "." + target.getName();
    FileStatus[] siblings =
        fs.listStatus(parent, p -> p.getName().startsWith(prefix + ".overlap-"));
    for (FileStatus s : siblings) {
      String rest = s.getPath().getName().substring(prefix.length());
      if (!LEFTOVER.matcher(rest).matches()) {
        continue; // the name of another output that only starts like this one's
      }
      if (rest.startsWith(StagedOutput.PREVIOUS)) {
        if (!fs.exists(target)) {
          LOG.warn("restoring {}: a run was stopped while it replaced it", target);
          StagedOutput.move(fs, s.getPath(), target);
        } else if (StagedOutput.writtenBy(fs, target).isPresent()) {
          fs.delete(s.getPath(), true); // the replace had finished
        } else {
          // Never delete an earlier result unless a complete one is in place.
          LOG.warn("left {} alone: {} is not a complete Overlap output", s.getPath(), target);
        }
      }
    }
    for (FileStatus s : siblings) {
      String rest = s.getPath().getName().substring(prefix.length());
      if (!LEFTOVER.matcher(rest).matches()) {
        continue;
      }
      if (rest.startsWith(StagedOutput.STAGING) && !aliveHere(rest)) {
        LOG.info("deleting {}: left by a run that was stopped", s.getPath());
        fs.delete(s.getPath(), true);
      }
    }
  }

  /** Whether a staging name belongs to a process that still runs, or to another host. */
  private static boolean aliveHere(String stagingName) {
    // .overlap-staging-<job>-<host>-<pid>-<yyyyMMdd>-<HHmmss>
    String[] parts = stagingName.substring(StagedOutput.STAGING.length()).split("-");
    if (parts.length < 5) {
      return false;
    }
    String host = String.join("-", Arrays.copyOfRange(parts, 1, parts.length - 3));
    if (!host.equals(StagedOutput.host())) {
      return true;
    }
    try {
      long pid = Long.parseLong(parts[parts.length - 3]);
      // The same pid as this run's can only be another container's run: count it alive.
      return pid == ProcessHandle.current().pid() || ProcessHandle.of(pid).isPresent();
    } catch (NumberFormatException e) {
      return false;
    }
  }
}
