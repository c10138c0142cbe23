package dev.overlap.jobs.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Optional;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A job's output, built in a staging folder beside the target and put in place only once complete.
 *
 * <p>The staging folder is a sibling of the target on the same file system, named {@code
 * .<target>.overlap-staging-<job>-<host>-<pid>-<time>}: hidden, so Spark and Hadoop readers never
 * list it as data, and recognisable, so a run that was killed is cleaned up by the next one. {@link
 * #commit()} writes the marker file {@value #MARKER} into the staging folder, moves an earlier
 * target aside to {@code .<target>.overlap-previous-…}, moves the staging folder to the target and
 * only then deletes the earlier result. Every step is a rename within one folder, so at each moment
 * the target holds the complete old result or the complete new one, except between the two renames
 * of a commit, when the old result sits under its {@code previous} name; {@link
 * StagedRecovery#recover} (which every run calls before it looks at the target) moves it back if
 * the process died there.
 *
 * <p>Nothing outside the target and these two sibling names is ever written, moved or deleted.
 */
public final class StagedOutput implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(StagedOutput.class);

  /** The file that says a folder is an Overlap job's output, and which job wrote it. */
  public static final String MARKER = "_OVERLAP_OUTPUT";

  public static final String STAGING = ".overlap-staging-";
  static final String PREVIOUS = ".overlap-previous-";

  /**
   * For crash tests: names a point ({@code between-tables}, {@code replace}) at which the run
   * prints {@code overlap-test: paused at <point>} and waits, so that a test can signal it there.
   */
  public static final String PAUSE_ENV = "OVERLAP_TEST_PAUSE_AT";

  /** Set when the JVM shuts down (a signal): a paused run resumes at once. */
  public static volatile boolean stopping;

  private final FileSystem fs;
  private final Path target;
  private final String job;
  private final Path staging;
  private final Object lock = new Object();
  private boolean committed;
  private boolean closed;

  private StagedOutput(FileSystem fs, Path target, String job, Path staging) {
    this.fs = fs;
    this.target = target;
    this.job = job;
    this.staging = staging;
  }

  /** Creates the staging folder for {@code target}; the caller writes the result into it. */
  public static StagedOutput begin(FileSystem fs, Path target, String job) throws IOException {
    String time = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
    Path staging =
        sibling(
            target,
            STAGING + job + "-" + host() + "-" + ProcessHandle.current().pid() + "-" + time);
    try {
      if (PathRelations.isLocal(staging)) {
        // Java's own call says why it failed (permission, read-only, a file in the way).
        Files.createDirectories(PathRelations.local(staging));
      } else if (!fs.mkdirs(staging)) {
        throw new IOException("mkdirs returned false");
      }
    } catch (IOException e) {
      throw new UsageException(
          "cannot make the output '"
              + target
              + "': its staging folder beside it cannot be created ("
              + e.getClass().getSimpleName()
              + ": "
              + JobPaths.firstLine(e)
              + "); choose an --output in a folder you can write to",
          e);
    }
    return new StagedOutput(fs, target, job, staging);
  }

  /** Where the job writes its result. */
  public Path staging() {
    return staging;
  }

  public Path target() {
    return target;
  }

  /**
   * Marks the staged result as complete and puts it in place of the target. Holds the lock that
   * {@link #abandon()} takes, so a shutdown hook sees the replace either done or not started.
   */
  public void commit() throws IOException {
    synchronized (lock) {
      if (closed) {
        throw new IOException("the run was interrupted; '" + target + "' was left as it was");
      }
      try (OutputStream out = fs.create(new Path(staging, MARKER), false)) {
        out.write(markerText(job).getBytes(StandardCharsets.UTF_8));
      }
      Path previous = null;
      if (fs.exists(target)) {
        previous =
            sibling(target, PREVIOUS + job + "-" + host() + "-" + ProcessHandle.current().pid());
        try {
          move(fs, target, previous);
        } catch (IOException e) {
          throw new UsageException(
              "cannot move the earlier result '"
                  + target
                  + "' aside to replace it ("
                  + e.getMessage()
                  + "); it was left as it was. Is it a mount point? Then write to a folder"
                  + " inside it",
              e);
        }
      }
      pause("replace");
      try {
        move(fs, staging, target);
      } catch (IOException e) {
        if (previous != null) {
          try {
            move(fs, previous, target);
          } catch (IOException restore) {
            e.addSuppressed(restore);
          }
        }
        throw e;
      }
      committed = true;
      if (previous != null && !fs.delete(previous, true)) {
        LOG.warn("could not delete the earlier result, moved aside to {}", previous);
      }
    }
  }

  /**
   * Deletes the staging folder unless the result was committed; safe from a shutdown hook while the
   * job still runs. Returns whether the result had been committed.
   */
  public boolean abandon() {
    synchronized (lock) {
      if (!closed) {
        closed = true;
        if (!committed) {
          try {
            fs.delete(staging, true);
          } catch (IOException e) {
            LOG.warn("could not delete the staging folder {}", staging, e);
          }
        }
      }
      return committed;
    }
  }

  @Override
  public void close() {
    abandon();
  }

  static String markerText(String job) {
    return "job=" + job + "\nwritten=" + LocalDateTime.now() + "\n";
  }

  /** Which job wrote {@code dir}, when it is an Overlap output. */
  public static Optional<String> writtenBy(FileSystem fs, Path dir) throws IOException {
    Path marker = new Path(dir, MARKER);
    if (!fs.isFile(marker)) {
      return Optional.empty();
    }
    try (var in = fs.open(marker)) {
      String text = new String(in.readNBytes(4096), StandardCharsets.UTF_8);
      for (String line : text.split("\n")) {
        if (line.startsWith("job=")) {
          return Optional.of(line.substring(4).trim());
        }
      }
    }
    return Optional.of("unknown");
  }

  /**
   * Renames {@code from} to {@code to}, which must not exist, as one step or not at all. On the
   * local file system this is rename(2) itself: Hadoop's local rename falls back to copying file by
   * file where rename(2) fails (a mount point, another device), which could leave both halves
   * partial. Elsewhere (HDFS) a rename is one metadata operation.
   */
  static void move(FileSystem fs, Path from, Path to) throws IOException {
    if (fs.exists(to)) {
      throw new IOException("'" + to + "' exists");
    }
    if ("file".equals(from.toUri().getScheme()) && "file".equals(to.toUri().getScheme())) {
      Files.move(
          PathRelations.local(from), PathRelations.local(to), StandardCopyOption.ATOMIC_MOVE);
    } else if (!fs.rename(from, to)) {
      throw new IOException("cannot rename '" + from + "' to '" + to + "'");
    }
  }

  static Path sibling(Path target, String suffix) {
    return new Path(target.getParent(), "." + target.getName() + suffix);
  }

  static String host() {
    try {
      return InetAddress.getLocalHost().getHostName().replaceAll("[^A-Za-z0-9.]", "_");
    } catch (IOException e) {
      return ManagementFactory.getRuntimeMXBean().getName().replaceAll("[^A-Za-z0-9.]", "_");
    }
  }

  /** The crash tests' hook; does nothing unless {@value #PAUSE_ENV} names this point. */
  public static void pause(String point) {
    if (point.equals(System.getenv(PAUSE_ENV))) {
      System.out.println("overlap-test: paused at " + point);
      System.out.flush();
      long until = System.nanoTime() + 120_000_000_000L;
      while (!stopping && System.nanoTime() < until) {
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  @Override
  public String toString() {
    return String.format(Locale.ROOT, "%s (staged in %s)", target, staging);
  }
}
