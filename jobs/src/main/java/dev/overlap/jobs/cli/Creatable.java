package dev.overlap.jobs.cli;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Set;

/**
 * Whether a local folder can be made where the user named it, checked before any work: each folder
 * on the way is a folder (not a regular file, not a symbolic link to nothing), and the deepest one
 * that exists is on a writable disk with room. Every refusal is a {@link UsageException} that names
 * the user's setting, the path at fault and what to do.
 */
public final class Creatable {
  /** File systems of the kernel's own, where no folder of a user's can be made. */
  private static final Set<String> PSEUDO =
      Set.of(
          "proc",
          "sysfs",
          "cgroup",
          "cgroup2",
          "debugfs",
          "tracefs",
          "securityfs",
          "configfs",
          "pstore",
          "bpf",
          "devpts",
          "mqueue",
          "fusectl",
          "hugetlbfs");

  /** Below this much free space a folder is refused: nothing useful fits. */
  static final long MIN_FREE = 1L << 20;

  private Creatable() {}

  /**
   * Refuses {@code dir} unless it is a folder or can be made as one. {@code what} names the
   * setting, e.g. {@code --output 'out/res'}.
   */
  static void folder(Path dir, String what) {
    Path abs = dir.toAbsolutePath().normalize();
    Path existing = null;
    Path walked = abs.getRoot();
    for (Path name : abs) {
      walked = walked.resolve(name);
      if (Files.isSymbolicLink(walked) && !Files.exists(walked)) {
        throw new UsageException(
            what
                + " cannot be made: '"
                + walked
                + "' is a symbolic link to '"
                + target(walked)
                + "', which does not exist; create that folder, or choose another path");
      }
      if (!Files.exists(walked)) {
        break;
      }
      if (!Files.isDirectory(walked)) {
        throw new UsageException(
            what
                + " cannot be made: '"
                + walked
                + "' is a file, not a folder; choose a folder that is not a file nor under"
                + " one");
      }
      existing = walked;
    }
    if (existing == null) {
      return;
    }
    FileStore store;
    try {
      store = Files.getFileStore(existing);
    } catch (IOException e) {
      return; // nothing more to learn here; the write itself will say
    }
    if (PSEUDO.contains(store.type())) {
      throw new UsageException(
          what
              + " cannot be made: '"
              + existing
              + "' is on the kernel's "
              + store.type()
              + " file system, where no folder can be made; choose a folder on a disk");
    }
    if (store.isReadOnly()) {
      throw new UsageException(
          what
              + " cannot be made: '"
              + existing
              + "' is on a read-only file system; choose a folder on a writable disk");
    }
    if (!Files.isWritable(existing)) {
      throw new UsageException(
          what
              + " cannot be made: the folder '"
              + existing
              + "' is not writable for you; choose a folder you can write to");
    }
    try {
      long free = store.getUsableSpace();
      if (free < MIN_FREE) {
        throw new UsageException(
            String.format(
                Locale.ROOT,
                "%s cannot be made: the disk that holds '%s' is full (%d KB free); free some"
                    + " space, or choose a folder on another disk",
                what,
                existing,
                free >> 10));
      }
    } catch (IOException e) {
      // unknown free space: the write itself will say
    }
  }

  /**
   * Refuses a path that is itself a symbolic link to nothing: a rename onto it would replace it.
   */
  static void notDangling(Path p, String what) {
    if (Files.isSymbolicLink(p) && !Files.exists(p)) {
      throw new UsageException(
          what
              + " is a symbolic link to '"
              + target(p)
              + "', which does not exist; create that folder, or choose another path");
    }
  }

  private static String target(Path link) {
    try {
      return Files.readSymbolicLink(link).toString();
    } catch (IOException e) {
      return "?";
    }
  }
}
