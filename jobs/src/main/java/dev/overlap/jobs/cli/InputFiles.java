package dev.overlap.jobs.cli;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The data files Spark reads for an input: a file matched, the files directly in a folder matched,
 * and those in its partition folders ({@code name=value}); not those in other subfolders, which
 * Spark leaves out. An input whose data lies only in such subfolders is refused, naming them.
 */
final class InputFiles {
  private InputFiles() {}

  /** The files, named relative to the input, in name order; at most {@code max}. */
  static Map<String, FileStatus> of(FileSystem fs, String input, List<Path> matches, int max) {
    Map<String, FileStatus> files = new TreeMap<>();
    String folder = null;
    List<String> subfolders = new ArrayList<>();
    for (Path m : matches) {
      try {
        FileStatus st = fs.getFileStatus(m);
        if (!st.isDirectory()) {
          if (files.size() < max) {
            files.put(m.getName(), st);
          }
          continue;
        }
        List<String> others = new ArrayList<>();
        collect(fs, st, "", files, others, max);
        if (!others.isEmpty() && folder == null) {
          folder = matches.size() == 1 ? input : m.toString();
          subfolders = others;
        }
      } catch (IOException e) {
        throw new UsageException("cannot read input path '" + m + "': " + JobPaths.firstLine(e));
      }
    }
    if (files.isEmpty() && folder != null) {
      String f = folder.endsWith("/") ? folder.substring(0, folder.length() - 1) : folder;
      throw new UsageException(
          "input path '"
              + folder
              + "' holds no Parquet files itself, only in its subfolders "
              + String.join(", ", subfolders.subList(0, Math.min(5, subfolders.size())))
              + (subfolders.size() > 5 ? " and " + (subfolders.size() - 5) + " more" : "")
              + ", which Spark does not read: point --input at one (e.g. --input "
              + f
              + "/"
              + subfolders.get(0)
              + "), or at them all with a glob (--input '"
              + f
              + "/*')");
    }
    return files;
  }

  /** Adds the files Spark reads under {@code dir}; names other subfolders that hold data. */
  private static void collect(
      FileSystem fs,
      FileStatus dir,
      String prefix,
      Map<String, FileStatus> files,
      List<String> others,
      int max)
      throws IOException {
    FileStatus[] children = fs.listStatus(dir.getPath());
    Arrays.sort(children);
    for (FileStatus c : children) {
      String name = c.getPath().getName();
      if (name.startsWith("_") || name.startsWith(".")) {
        continue;
      }
      if (!c.isDirectory()) {
        if (files.size() < max) {
          files.put(prefix + name, c);
        }
      } else if (name.contains("=")) {
        collect(fs, c, prefix + name + "/", files, others, max);
      } else if (prefix.isEmpty() && holdsData(fs, c.getPath())) {
        others.add(name);
      }
    }
  }

  private static boolean holdsData(FileSystem fs, Path dir) throws IOException {
    var it = fs.listFiles(dir, true);
    int root = dir.toUri().getPath().length();
    while (it.hasNext()) {
      String rel = it.next().getPath().toUri().getPath().substring(root);
      if (!rel.matches("(?s).*/[_.].*")) {
        return true;
      }
    }
    return false;
  }
}
