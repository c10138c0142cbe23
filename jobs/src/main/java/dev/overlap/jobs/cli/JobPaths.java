package dev.overlap.jobs.cli;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.UnsupportedFileSystemException;

/**
 * The checks a job's input and output pass before any work: an input that exists and holds data,
 * and an output that cannot be a mistake. Every refusal is a {@link UsageException} naming both
 * paths.
 */
public final class JobPaths {
  /** Where a job without --input finds, or generates, its embedded default data. */
  public static final String DEFAULT_DATA = "data/tpch-sf0.01";

  private final Configuration conf;
  private final java.nio.file.Path cwd;
  private final List<Protected> protectedFolders = new ArrayList<>();

  /** A folder no output may be, nor hold. */
  private record Protected(java.nio.file.Path path, String what) {}

  public JobPaths(Configuration conf, java.nio.file.Path cwd, Optional<String> projectHome) {
    this.conf = conf;
    this.cwd = cwd.toAbsolutePath().normalize();
    protectedFolders.add(new Protected(PathRelations.real(this.cwd), "the current directory"));
    projectHome.ifPresent(
        h ->
            protectedFolders.add(
                new Protected(PathRelations.real(Paths.get(h)), "the Overlap project folder")));
    String home = System.getProperty("user.home");
    if (home != null && !home.isEmpty() && !home.equals("?")) {
      protectedFolders.add(new Protected(PathRelations.real(Paths.get(home)), "your home folder"));
    }
  }

  Configuration conf() {
    return conf;
  }

  public FileSystem fs(String path) {
    try {
      return new Path(path).getFileSystem(conf);
    } catch (UnsupportedFileSystemException e) {
      String scheme = URI.create(path.replace(" ", "%20")).getScheme();
      throw new UsageException(
          "no file system for '"
              + scheme
              + "://' (in '"
              + path
              + "'): add its Hadoop connector to the job"
              + ("s3a".equals(scheme)
                  ? " (--conf spark.jars.packages=org.apache.hadoop:hadoop-aws:3.4.1)"
                  : "")
              + " or use a local path");
    } catch (IOException | IllegalArgumentException e) {
      throw new UsageException("cannot use path '" + path + "': " + firstLine(e));
    }
  }

  public Path qualified(String path) {
    return fs(path).makeQualified(new Path(path));
  }

  /**
   * The input's matches (a glob is expanded as Spark would); each exists and holds at least one
   * data file (names starting with {@code _} or {@code .} are not data, for Spark as for Hadoop),
   * and none is a Delta or Iceberg table or inside one ({@link TableFolders}).
   */
  public List<Path> input(String input) {
    return input(input, false);
  }

  /**
   * The input's matches: with {@code deltaTable} ({@code --format delta}), one Delta table's own
   * folder, holding data or not; else as {@link #input(String)}.
   */
  public List<Path> input(String input, boolean deltaTable) {
    FileSystem fs = fs(input);
    FileStatus[] matches;
    try {
      matches = fs.globStatus(new Path(input));
    } catch (IOException e) {
      throw new UsageException("cannot read input path '" + input + "': " + firstLine(e));
    }
    if (matches == null || matches.length == 0) {
      throw new UsageException("input path '" + input + "' does not exist");
    }
    if (deltaTable) {
      TableFolders.requireDelta(fs, input, List.of(matches));
      return List.of(matches[0].getPath());
    }
    TableFolders.refuse(fs, input, List.of(matches));
    List<Path> out = new ArrayList<>();
    for (FileStatus m : matches) {
      if (m.isDirectory() && !holdsData(fs, m.getPath())) {
        throw new UsageException(
            "input path '"
                + (matches.length == 1 ? input : m.getPath().toString())
                + "' holds no data files; point --input at a folder of Parquet files");
      }
      out.add(m.getPath());
    }
    return out;
  }

  private static boolean holdsData(FileSystem fs, Path dir) {
    try {
      RemoteIterator<LocatedFileStatus> it = fs.listFiles(dir, true);
      while (it.hasNext()) {
        Path p = it.next().getPath();
        if (!hidden(dir, p)) {
          return true;
        }
      }
      return false;
    } catch (IOException e) {
      throw new UsageException("cannot read input path '" + dir + "': " + firstLine(e));
    }
  }

  /** Whether a name on the way from {@code root} down to {@code p} is hidden from Spark. */
  private static boolean hidden(Path root, Path p) {
    String rel = p.toUri().getPath().substring(root.toUri().getPath().length());
    for (String name : rel.split("/")) {
      if (name.startsWith("_") || name.startsWith(".")) {
        return true;
      }
    }
    return false;
  }

  /**
   * Refuses an output that can only be a mistake: one of the inputs, inside one, or holding one;
   * the root folder; the current directory, the project folder or the home folder, or a folder
   * above one of them.
   */
  public void checkOutputPlace(String output, List<Path> inputs) {
    checkOutputPlace("--output", output, inputs);
  }

  /** The same checks for a folder another option names ({@code --save-model}). */
  public void checkOutputPlace(String option, String output, List<Path> inputs) {
    Path out = qualified(output);
    if (out.getParent() == null) {
      throw new UsageException(
          option + " '" + output + "' is the root folder; choose a folder of its own");
    }
    if (PathRelations.isLocal(out)) {
      java.nio.file.Path o = PathRelations.real(PathRelations.local(out));
      for (Protected p : protectedFolders) {
        if (p.path.startsWith(o)) {
          throw new UsageException(
              option
                  + " '"
                  + output
                  + "' "
                  + (p.path.equals(o) ? "is " : "holds ")
                  + p.what
                  + " '"
                  + p.path
                  + "'; choose a folder of its own, e.g. out/result");
        }
      }
    }
    for (Path in : inputs) {
      Path inQ = qualified(in.toString());
      if (PathRelations.sameOrInside(out, inQ)) {
        throw new UsageException(
            option
                + " '"
                + output
                + "' "
                + (PathRelations.same(out, inQ) ? "is" : "is inside")
                + " the input '"
                + in
                + "'; choose a folder outside the input");
      }
      if (PathRelations.sameOrInside(inQ, out)) {
        throw new UsageException(
            option
                + " '"
                + output
                + "' holds the input '"
                + in
                + "': replacing it would delete the input; choose a folder outside it");
      }
    }
  }

  /** See {@link StagedRecovery#recover}. */
  void recover(String output) {
    try {
      StagedRecovery.recover(fs(output), qualified(output));
    } catch (IOException e) {
      throw new UsageException("cannot read output path '" + output + "': " + firstLine(e));
    }
  }

  /**
   * Refuses to replace an existing output unless it is this job's earlier output and replacing was
   * asked for ({@code replace}), or the user said to replace anything ({@code replaceUnmarked}).
   */
  void checkExistingOutput(String output, String job, boolean replace, boolean replaceUnmarked) {
    Path out = qualified(output);
    FileSystem fs = fs(output);
    try {
      if (!fs.exists(out)) {
        return;
      }
      Optional<String> by =
          fs.isDirectory(out) ? StagedOutput.writtenBy(fs, out) : Optional.empty();
      if (replaceUnmarked) {
        if (by.isEmpty() && PathRelations.isLocal(out)) {
          WorkTrees.refuseTracked(PathRelations.local(out), output);
        }
        return;
      }
      if (by.isEmpty()) {
        throw new UsageException(
            "output path '"
                + output
                + "' exists and is not an Overlap output (it has no "
                + StagedOutput.MARKER
                + " file); choose another --output, or pass "
                + JobArgs.OVERWRITE_UNMARKED
                + " to replace it");
      }
      if (!by.get().equals(job)) {
        throw new UsageException(
            "output path '"
                + output
                + "' holds the result of "
                + by.get()
                + ", not of "
                + job
                + "; choose another --output, or pass "
                + JobArgs.OVERWRITE_UNMARKED
                + " to replace it");
      }
      if (!replace) {
        throw new UsageException(
            "output path '" + output + "' exists; pass --overwrite to replace it");
      }
    } catch (IOException e) {
      throw new UsageException("cannot read output path '" + output + "': " + firstLine(e));
    }
  }

  /** Bytes free on the local file system that would hold {@code output}; empty when not local. */
  public FreeSpace freeSpace(String output) {
    Path out = qualified(output);
    if (!PathRelations.isLocal(out)) {
      return FreeSpace.UNKNOWN;
    }
    java.nio.file.Path p = PathRelations.local(out).toAbsolutePath();
    while (p != null && !Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
      p = p.getParent();
    }
    try {
      return p == null
          ? FreeSpace.UNKNOWN
          : new FreeSpace(p, Files.getFileStore(p).getUsableSpace());
    } catch (IOException e) {
      return FreeSpace.UNKNOWN;
    }
  }

  /** Free space of a local folder, where known. */
  public record FreeSpace(java.nio.file.Path where, long bytes) {
    static final FreeSpace UNKNOWN = new FreeSpace(null, -1);
  }

  static String firstLine(Throwable e) {
    String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    int nl = m.indexOf('\n');
    return nl < 0 ? m : m.substring(0, nl);
  }
}
