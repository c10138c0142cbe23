package dev.overlap.executor.input.parquet;

import ai.rapids.cudf.HostMemoryBuffer;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;

/**
 * Positional reads of byte ranges of one file straight into a host buffer (pinned staging memory on
 * a GPU executor): a local file through its channel, any other file system through Hadoop's
 * byte-buffer reads where the stream offers them, else through a small bounce array.
 */
public final class ChunkReader implements Closeable {
  private static final int PIECE = 1 << 30;
  private static final int BOUNCE = 4 << 20;

  private final FileChannel channel;
  private final FSDataInputStream stream;
  private final boolean byteBufferReads;
  private byte[] bounce;

  ChunkReader(String path, Configuration conf) throws IOException {
    URI uri = URI.create(path);
    if (uri.getScheme() == null || uri.getScheme().equals("file")) {
      java.nio.file.Path local = uri.getScheme() == null ? Paths.get(path) : Paths.get(uri);
      channel = FileChannel.open(local, StandardOpenOption.READ);
      stream = null;
      byteBufferReads = false;
    } else {
      Path p = new Path(uri);
      channel = null;
      stream = p.getFileSystem(conf).open(p);
      byteBufferReads = stream.hasCapability(StreamCapabilities.PREADBYTEBUFFER);
    }
  }

  /** Reads {@code length} bytes at {@code position} of the file into {@code to} at {@code at}. */
  void read(long position, HostMemoryBuffer to, long at, long length) throws IOException {
    for (long done = 0; done < length; ) {
      int n = (int) Math.min(PIECE, length - done);
      ByteBuffer b = to.asByteBuffer(at + done, n);
      if (channel != null) {
        long pos = position + done;
        while (b.hasRemaining()) {
          int r = channel.read(b, pos);
          if (r < 0) {
            throw new EOFException("file ends before byte " + (position + length));
          }
          pos += r;
        }
      } else if (byteBufferReads) {
        stream.readFully(position + done, b);
      } else {
        if (bounce == null) {
          bounce = new byte[BOUNCE];
        }
        for (int off = 0; off < n; ) {
          int k = Math.min(BOUNCE, n - off);
          stream.readFully(position + done + off, bounce, 0, k);
          b.put(bounce, 0, k);
          off += k;
        }
      }
      done += n;
    }
  }

  @Override
  public void close() throws IOException {
    if (channel != null) {
      channel.close();
    } else {
      stream.close();
    }
  }
}
