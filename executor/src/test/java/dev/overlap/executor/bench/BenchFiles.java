package dev.overlap.executor.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * What the benchmarks leave on disk: the outputs they wrote are deleted when they end, however they
 * end; the inputs they generated and keep for the next run are named with their size.
 */
public final class BenchFiles {
  private BenchFiles() {}

  /** Bytes of the regular files under {@code p}; 0 when it does not exist. */
  public static long size(Path p) throws IOException {
    if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
      return 0;
    }
    try (Stream<Path> all = Files.walk(p)) {
      return all.filter(f -> Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS))
          .mapToLong(
              f -> {
                try {
                  return Files.size(f);
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              })
          .sum();
    }
  }

  /** Deletes {@code p} and everything under it, if it exists; says what it freed. */
  public static void delete(Path p) throws IOException {
    if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    long bytes = size(p);
    try (Stream<Path> all = Files.walk(p)) {
      for (Path f : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(f);
      }
    }
    System.out.printf(Locale.ROOT, "deleted %s (%s)%n", p, gigabytes(bytes));
  }

  /** {@link #delete} for each of {@code paths}; every one is tried, the first failure thrown. */
  public static void deleteAll(List<Path> paths) throws IOException {
    IOException first = null;
    for (Path p : paths) {
      try {
        delete(p);
      } catch (IOException | UncheckedIOException e) {
        IOException io = e instanceof IOException x ? x : ((UncheckedIOException) e).getCause();
        if (first == null) {
          first = io;
        } else {
          first.addSuppressed(io);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }

  /** Says that {@code p}, an input kept for the next run, is left, and how large it is. */
  public static void kept(Path p, String what) throws IOException {
    if (Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
      System.out.printf(
          Locale.ROOT,
          "kept %s: %s, %s (reused by the next run; delete it when done)%n",
          p,
          what,
          gigabytes(size(p)));
    }
  }

  private static String gigabytes(long bytes) {
    return String.format(Locale.ROOT, "%.2f GB", bytes / 1e9);
  }
}
