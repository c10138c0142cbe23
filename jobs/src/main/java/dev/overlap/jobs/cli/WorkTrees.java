package dev.overlap.jobs.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Guards a git work tree's files against {@code --overwrite-unmarked}: a folder that is a work
 * tree, holds one, or holds files one tracks is never replaced, as the project folder is not.
 */
final class WorkTrees {
  /** How deep below the output a nested work tree is looked for. */
  private static final int DEPTH = 3;

  private WorkTrees() {}

  /** Refuses to replace {@code out} (named {@code output} by the user) if git's files are there. */
  static void refuseTracked(Path out, String output) {
    Path real = PathRelations.real(out);
    nested(real)
        .ifPresent(
            tree -> {
              throw new UsageException(
                  "--output '"
                      + output
                      + "' "
                      + (tree.equals(real) ? "is" : "holds")
                      + " the git work tree '"
                      + tree
                      + "'; replacing it would delete its files: choose a folder of its own, e.g."
                      + " out/result");
            });
    Path above = real.getParent();
    while (above != null && !Files.exists(above.resolve(".git"))) {
      above = above.getParent();
    }
    if (above == null) {
      return;
    }
    Path tree = above;
    String rel = tree.relativize(real).toString();
    Optional<String> tracked;
    try {
      tracked = firstTracked(tree, rel);
    } catch (IOException e) {
      throw new UsageException(
          "--output '"
              + output
              + "' is inside the git work tree '"
              + tree
              + "', and git cannot say which files it tracks there ("
              + JobPaths.firstLine(e)
              + "); choose a folder outside the work tree");
    }
    tracked.ifPresent(
        f -> {
          throw new UsageException(
              "--output '"
                  + output
                  + "' holds files that the git work tree '"
                  + tree
                  + "' tracks (e.g. "
                  + f
                  + "); replacing it would delete them: choose a folder of its own, e.g."
                  + " out/result");
        });
  }

  /** A work tree at {@code dir} or a few levels below it. */
  private static Optional<Path> nested(Path dir) {
    if (!Files.isDirectory(dir)) {
      return Optional.empty();
    }
    try (Stream<Path> s = Files.walk(dir, DEPTH)) {
      return s.filter(p -> p.getFileName() != null && p.getFileName().toString().equals(".git"))
          .map(Path::getParent)
          .findFirst();
    } catch (IOException | java.io.UncheckedIOException e) {
      return Optional.empty();
    }
  }

  /** The first file under {@code rel} that the work tree at {@code tree} tracks. */
  private static Optional<String> firstTracked(Path tree, String rel) throws IOException {
    Process p =
        new ProcessBuilder("git", "-C", tree.toString(), "ls-files", "-z", "--", rel)
            .redirectErrorStream(false)
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    byte[] first;
    try (InputStream in = p.getInputStream()) {
      first = in.readNBytes(4096);
      in.transferTo(java.io.OutputStream.nullOutputStream());
    }
    try {
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException("git ls-files did not answer in 30 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted");
    }
    if (p.exitValue() != 0) {
      throw new IOException("git ls-files exited with " + p.exitValue());
    }
    String text = new String(first, StandardCharsets.UTF_8);
    int end = text.indexOf('\0');
    return text.isEmpty() ? Optional.empty() : Optional.of(end < 0 ? text : text.substring(0, end));
  }
}
