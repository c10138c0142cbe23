package dev.overlap.jobs;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Every file and folder under a root, with a SHA-256 of each file's bytes: two snapshots are equal
 * exactly when nothing under the root was added, removed or changed.
 */
public record TreeSnapshot(Path root, TreeMap<String, String> entries) {
  /** Snapshots {@code root}, leaving out folders with the given names (build output, logs). */
  static TreeSnapshot of(Path root, Set<String> skipNames) {
    TreeMap<String, String> entries = new TreeMap<>();
    if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
      return new TreeSnapshot(root, entries);
    }
    try (Stream<Path> all = Files.walk(root)) {
      all.filter(p -> !skipped(root, p, skipNames))
          .forEach(
              p -> {
                String rel = root.relativize(p).toString();
                if (Files.isSymbolicLink(p)) {
                  entries.put(rel, "link:" + readLink(p));
                } else if (Files.isDirectory(p)) {
                  entries.put(rel + "/", "dir");
                } else {
                  entries.put(rel, sha256(p));
                }
              });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new TreeSnapshot(root, entries);
  }

  static TreeSnapshot of(Path root) {
    return of(root, Set.of());
  }

  private static boolean skipped(Path root, Path p, Set<String> skipNames) {
    for (Path part : root.relativize(p)) {
      if (skipNames.contains(part.toString())) {
        return true;
      }
    }
    return false;
  }

  private static String readLink(Path p) {
    try {
      return Files.readSymbolicLink(p).toString();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String sha256(Path p) {
    try (InputStream in = Files.newInputStream(p)) {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      byte[] buf = new byte[1 << 16];
      for (int n; (n = in.read(buf)) > 0; ) {
        md.update(buf, 0, n);
      }
      return HexFormat.of().formatHex(md.digest());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** What differs from {@code before}, for a failure message; empty when nothing does. */
  String diff(TreeSnapshot before) {
    StringBuilder sb = new StringBuilder();
    before.entries.forEach(
        (k, v) -> {
          String now = entries.get(k);
          if (now == null) {
            sb.append("removed ").append(k).append('\n');
          } else if (!now.equals(v)) {
            sb.append("changed ").append(k).append('\n');
          }
        });
    entries.keySet().stream()
        .filter(k -> !before.entries.containsKey(k))
        .forEach(k -> sb.append("added ").append(k).append('\n'));
    return sb.toString();
  }
}
