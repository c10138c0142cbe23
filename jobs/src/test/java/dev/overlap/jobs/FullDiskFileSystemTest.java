package dev.overlap.jobs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The small disk the full-disk tests write to: what it holds, refuses and frees. */
class FullDiskFileSystemTest {
  @TempDir Path tmp;

  private static FileSystem disk(String name, Configuration conf) throws IOException {
    return FileSystem.newInstance(URI.create(FullDiskFileSystem.SCHEME + "://" + name + "/"), conf);
  }

  private org.apache.hadoop.fs.Path on(String disk, String file) {
    return new org.apache.hadoop.fs.Path(
        FullDiskFileSystem.SCHEME + "://" + disk + tmp.resolve(file));
  }

  private static void write(FileSystem fs, org.apache.hadoop.fs.Path p, int bytes)
      throws IOException {
    try (OutputStream out = fs.create(p, false)) {
      out.write(new byte[bytes]);
    }
  }

  @Test
  void aDiskRefusesWritesPastItsCapacityAndFreesWhatItDeletes() throws IOException {
    Configuration conf = new Configuration();
    conf.set("fs." + FullDiskFileSystem.SCHEME + ".impl", FullDiskFileSystem.class.getName());
    conf.setLong(FullDiskFileSystem.capacityOf("small"), 100);
    try (FileSystem small = disk("small", conf);
        FileSystem big = disk("big", conf)) {
      write(small, on("small", "a"), 60);
      // The local file system's files, under another scheme.
      assertArrayEquals(new byte[60], Files.readAllBytes(tmp.resolve("a")));
      assertEquals(60, ((FullDiskFileSystem) small).used());
      IOException full = assertThrows(IOException.class, () -> write(small, on("small", "b"), 60));
      assertEquals(FullDiskFileSystem.NO_SPACE, full.getMessage());
      assertEquals(1, ((FullDiskFileSystem) small).refused());
      assertEquals(0, Files.size(tmp.resolve("b")), "nothing of a refused write is written");
      // Deleting frees the space, as on a real disk.
      assertTrue(small.delete(on("small", "a"), false));
      assertFalse(Files.exists(tmp.resolve("a")));
      assertEquals(0, ((FullDiskFileSystem) small).used());
      write(small, on("small", "c"), 100);
      // Another disk counts apart, without a capacity of its own.
      write(big, on("big", "d"), 1 << 20);
      assertEquals(1 << 20, Files.size(tmp.resolve("d")));
      assertEquals(
          FullDiskFileSystem.SCHEME + "://small" + tmp.resolve("c"),
          small.getFileStatus(on("small", "c")).getPath().toString());
    }
  }
}
