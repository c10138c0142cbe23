package dev.overlap.jobs;

import java.io.File;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * A small disk for tests, where CI has no loop device or tmpfs: the local file system under the
 * scheme {@value #SCHEME} ({@code fulldisk:///tmp/x} is {@code /tmp/x}), whose writes fail with
 * {@code IOException("No space left on device")} once the bytes written through it would pass
 * {@value #CAPACITY} (the bytes of the files it deletes are free again, as on a real disk). Each
 * authority is a disk of its own ({@code fulldisk://a/tmp/x} and {@code fulldisk://b/tmp/x} hold
 * the same files but count apart), since Hadoop keeps one instance per scheme and authority.
 *
 * <p>Registered with {@code spark.hadoop.fs.fulldisk.impl=dev.overlap.jobs.FullDiskFileSystem} (and
 * {@code spark.hadoop.fs.fulldisk.capacity=BYTES}, or {@code fs.fulldisk.capacity.<disk>} for one
 * disk); {@value #WRITE_DELAY} makes every write that reaches the disk take that many milliseconds
 * more (a slow disk, so that tasks are still writing when a test needs them to be).
 */
public final class FullDiskFileSystem extends RawLocalFileSystem {
  public static final String SCHEME = "fulldisk";

  /** Every disk's capacity in bytes; {@link #capacityOf} sets one disk's. */
  public static final String CAPACITY = "fs.fulldisk.capacity";

  public static final String WRITE_DELAY = "fs.fulldisk.writeDelayMs";
  public static final String NO_SPACE = "No space left on device";

  // Null while RawLocalFileSystem's constructor asks for it (getUri), set by initialize.
  private URI uri;
  private long capacity = Long.MAX_VALUE;
  private long delayMillis;
  private final AtomicLong used = new AtomicLong();
  private final AtomicLong refused = new AtomicLong();

  /** The key of the capacity of the disk named {@code disk} (the URI's authority) alone. */
  public static String capacityOf(String disk) {
    return CAPACITY + "." + disk;
  }

  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    super.initialize(name, conf);
    String disk = name.getAuthority() == null ? "" : name.getAuthority();
    uri = URI.create(SCHEME + "://" + disk + "/");
    capacity = conf.getLong(capacityOf(disk), conf.getLong(CAPACITY, Long.MAX_VALUE));
    delayMillis = conf.getLong(WRITE_DELAY, 0);
    setWorkingDirectory(getInitialWorkingDirectory());
  }

  @Override
  public URI getUri() {
    return uri == null ? URI.create(SCHEME + ":///") : uri;
  }

  @Override
  public String getScheme() {
    return SCHEME;
  }

  /** Bytes written and not deleted. */
  public long used() {
    return used.get();
  }

  /** Writes refused for want of space. */
  public long refused() {
    return refused.get();
  }

  @Override
  protected OutputStream createOutputStreamWithMode(Path f, boolean append, FsPermission permission)
      throws IOException {
    return new FilterOutputStream(super.createOutputStreamWithMode(f, append, permission)) {
      @Override
      public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
      }

      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        slow();
        if (used.addAndGet(len) > capacity) {
          used.addAndGet(-len);
          refused.incrementAndGet();
          throw new IOException(NO_SPACE);
        }
        out.write(b, off, len);
      }
    };
  }

  private void slow() throws IOException {
    if (delayMillis > 0) {
      try {
        Thread.sleep(delayMillis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("interrupted while writing");
      }
    }
  }

  @Override
  public boolean delete(Path p, boolean recursive) throws IOException {
    long bytes = bytesUnder(pathToFile(p));
    boolean deleted = super.delete(p, recursive);
    if (deleted) {
      used.addAndGet(-Math.min(bytes, used.get()));
    }
    return deleted;
  }

  private static long bytesUnder(File f) throws IOException {
    java.nio.file.Path p = f.toPath();
    if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
      return 0;
    }
    try (Stream<java.nio.file.Path> all = Files.walk(p)) {
      return all.filter(q -> Files.isRegularFile(q, LinkOption.NOFOLLOW_LINKS))
          .mapToLong(q -> q.toFile().length())
          .sum();
    }
  }

  /**
   * An agent that does nothing: {@code -javaagent:} with a jar of this class puts the jar on the
   * system class path of a JVM whose class path a script sets ({@code spark-submit.sh}), so that
   * Hadoop finds this file system there.
   */
  public static final class OnClassPath {
    private OnClassPath() {}

    public static void premain(String args) {}
  }
}
