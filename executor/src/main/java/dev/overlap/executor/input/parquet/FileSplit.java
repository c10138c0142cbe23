package dev.overlap.executor.input.parquet;

import java.io.Serializable;

/**
 * A byte range of one input file that Spark gave one task, as its file scan planned it.
 *
 * @param path the file's URI, as Hadoop's file systems take it
 * @param start first byte of the split
 * @param length bytes in the split
 * @param fileSize the file's size when Spark listed it
 * @param modificationTime the file's modification time when Spark listed it
 */
public record FileSplit(String path, long start, long length, long fileSize, long modificationTime)
    implements Serializable {
  /** The file name alone, for messages. */
  public String fileName() {
    int slash = path.lastIndexOf('/');
    return slash < 0 ? path : path.substring(slash + 1);
  }
}
