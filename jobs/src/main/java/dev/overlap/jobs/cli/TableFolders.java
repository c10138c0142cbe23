package dev.overlap.jobs.cli;

import java.io.IOException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Refuses a Parquet input that is, or lies inside, a Delta Lake or Apache Iceberg table. Such a
 * table's folder keeps the files of its old versions and deleted rows until they are vacuumed; only
 * its log says which files are current, so reading the folder as plain Parquet would count rows the
 * table no longer has. A Delta table is read as a table with {@code --format delta}, whose input
 * must be the table's own folder ({@link #requireDelta}). A folder is a Delta table when it holds a
 * {@code _delta_log} folder, an Iceberg table when it holds a {@code metadata} folder with a {@code
 * *.metadata.json} file. Every folder from each match of the input (a file's own folder) up to the
 * file system's root is looked at, once, through the input's Hadoop file system.
 */
final class TableFolders {
  static final String DELTA_LOG = "_delta_log";
  static final String ICEBERG_METADATA = "metadata";
  static final String ICEBERG_SUFFIX = ".metadata.json";

  /** A kind of table: its name, what marks its folder, and what of it to export. */
  private record Kind(String article, String name, String marker, String current) {}

  private static final Kind DELTA = new Kind("a", "Delta", "a " + DELTA_LOG + " folder", "version");

  /** Shown after a Delta table's refusal: the table's own folder, read as a table. */
  static final String DELTA_FLAG = "--format delta";

  private static final Kind ICEBERG =
      new Kind(
          "an",
          "Iceberg",
          "a " + ICEBERG_METADATA + " folder with *" + ICEBERG_SUFFIX + " files",
          "snapshot");

  private TableFolders() {}

  /**
   * Throws a {@link UsageException} naming the table when one of {@code matches}, the input's
   * matches as {@link FileSystem#globStatus} gave them, is a table or lies inside one.
   */
  static void refuse(FileSystem fs, String input, List<FileStatus> matches) {
    Set<Path> seen = new HashSet<>();
    for (FileStatus m : matches) {
      Path p = m.isDirectory() ? m.getPath() : m.getPath().getParent();
      for (; p != null && seen.add(p); p = p.getParent()) {
        Kind kind =
            isFolder(fs, new Path(p, DELTA_LOG)) ? DELTA : isIceberg(fs, p) ? ICEBERG : null;
        if (kind != null) {
          boolean itself = matches.size() == 1 && !isGlob(input) && p.equals(m.getPath());
          throw refusal(input, p, kind, itself);
        }
      }
    }
  }

  /**
   * Throws a {@link UsageException} unless the input, {@code matches} as {@link
   * FileSystem#globStatus} gave them, is one Delta table's own folder: not a glob, not a folder or
   * file inside a table, not an Iceberg table, not a folder of no table.
   */
  static void requireDelta(FileSystem fs, String input, List<FileStatus> matches) {
    if (matches.size() != 1 || isGlob(input)) {
      throw new UsageException(
          "--input '"
              + input
              + "' is a glob: "
              + DELTA_FLAG
              + " reads one Delta table, so give its folder (the one holding "
              + DELTA_LOG
              + ")");
    }
    FileStatus m = matches.get(0);
    for (Path p = m.isDirectory() ? m.getPath() : m.getPath().getParent();
        p != null;
        p = p.getParent()) {
      if (isFolder(fs, new Path(p, DELTA_LOG))) {
        if (p.equals(m.getPath())) {
          return;
        }
        throw new UsageException(
            "--input '"
                + input
                + "' is inside the Delta table '"
                + shown(input, p)
                + "': "
                + DELTA_FLAG
                + " reads a table whole; give --input '"
                + shown(input, p)
                + "'");
      }
      if (isIceberg(fs, p)) {
        throw refusal(input, p, ICEBERG, p.equals(m.getPath()));
      }
    }
    throw new UsageException(
        "--input '"
            + input
            + "' is not a Delta table (it has no "
            + DELTA_LOG
            + " folder): drop "
            + DELTA_FLAG
            + " to read it as Parquet, or give the table's folder");
  }

  private static UsageException refusal(String input, Path table, Kind kind, boolean itself) {
    String to =
        kind != DELTA
            ? "give a Parquet folder, or export the table's current "
                + kind.current
                + " to Parquet first ("
                + kind.name
                + " tables are not read by the jobs yet)"
            : itself
                ? "add " + DELTA_FLAG + " to read it as a table"
                : "give --input '" + shown(input, table) + "' " + DELTA_FLAG + " to read the table";
    return new UsageException(
        "--input '"
            + input
            + "' "
            + what(input, table, kind, itself)
            + " (it has "
            + kind.marker
            + "): reading its files as plain Parquet would count files the table removed; "
            + to);
  }

  private static String what(String input, Path table, Kind kind, boolean itself) {
    return itself
        ? "is " + kind.article + " " + kind.name + " table"
        : (isGlob(input) ? "matches files of" : "is inside")
            + " the "
            + kind.name
            + " table '"
            + shown(input, table)
            + "'";
  }

  /** The table's folder as the input names its paths: with the scheme only when it has one. */
  private static String shown(String input, Path table) {
    boolean schemed = input.matches("[A-Za-z][A-Za-z0-9+.-]*:.*") && !input.startsWith("file:");
    return schemed ? table.toString() : table.toUri().getPath();
  }

  /** Whether Hadoop's globbing gives the input a special character. */
  private static boolean isGlob(String input) {
    return input.matches("(?s).*[*?\\[{\\\\].*");
  }

  private static boolean isIceberg(FileSystem fs, Path folder) {
    Path metadata = new Path(folder, ICEBERG_METADATA);
    if (!isFolder(fs, metadata)) {
      return false;
    }
    try {
      return fs.listStatus(metadata, f -> f.getName().endsWith(ICEBERG_SUFFIX)).length > 0;
    } catch (IOException e) {
      return false; // a folder this user cannot list: nothing to say about it
    }
  }

  private static boolean isFolder(FileSystem fs, Path p) {
    try {
      return fs.getFileStatus(p).isDirectory();
    } catch (IOException e) {
      return false; // not there (FileNotFoundException), or a parent this user cannot look into
    }
  }
}
