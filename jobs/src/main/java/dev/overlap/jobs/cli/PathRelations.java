package dev.overlap.jobs.cli;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Paths;
import org.apache.hadoop.fs.Path;

/**
 * How two paths relate, for {@link JobPaths}' checks: the same folder, or one inside the other.
 * Local paths are compared as real paths (symbolic links resolved as far as they exist), others by
 * scheme, authority and normalized path.
 */
public final class PathRelations {
  private PathRelations() {}

  /** Whether {@code p} is on the local file system. */
  static boolean isLocal(Path p) {
    return "file".equals(p.toUri().getScheme());
  }

  /** Whether {@code a} and {@code b} are the same path. */
  static boolean same(Path a, Path b) {
    return normal(a).equals(normal(b));
  }

  /** Whether {@code a} is {@code b} or inside it, comparing real paths for local files. */
  public static boolean sameOrInside(Path a, Path b) {
    if (isLocal(a) && isLocal(b)) {
      return real(local(a)).startsWith(real(local(b)));
    }
    URI ua = a.toUri();
    URI ub = b.toUri();
    if (!String.valueOf(ua.getScheme()).equals(String.valueOf(ub.getScheme()))
        || !String.valueOf(ua.getAuthority()).equals(String.valueOf(ub.getAuthority()))) {
      return false;
    }
    String pa = normal(a);
    String pb = normal(b);
    return pa.equals(pb) || pa.startsWith(pb.endsWith("/") ? pb : pb + "/");
  }

  private static String normal(Path p) {
    if (isLocal(p)) {
      return real(local(p)).toString();
    }
    return p.toUri().normalize().getPath();
  }

  /**
   * A local Hadoop path as a file path. From the URI's decoded path, not the URI itself: {@code
   * Paths.get(URI)} refuses a URI that holds non-ASCII characters ("Bad escape").
   */
  static java.nio.file.Path local(Path p) {
    return Paths.get(p.toUri().getPath());
  }

  /** The path with symbolic links resolved as far as it exists, the rest appended. */
  static java.nio.file.Path real(java.nio.file.Path p) {
    java.nio.file.Path abs = p.toAbsolutePath().normalize();
    java.nio.file.Path existing = abs;
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      return abs;
    }
    try {
      return existing.toRealPath().resolve(existing.relativize(abs)).normalize();
    } catch (IOException e) {
      return abs;
    }
  }
}
