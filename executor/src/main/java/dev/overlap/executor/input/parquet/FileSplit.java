package dev.overlap.executor.input.parquet;

import dev.overlap.executor.input.parquet.delta.DeletionVector;
import java.io.Serializable;

/**
 * A byte range of one input file that Spark gave one task, as its file scan planned it.
 *
 * @param path the file's URI, as Hadoop's file systems take it
 * @param start first byte of the split
 * @param length bytes in the split
 * @param fileSize the file's size when Spark listed it
 * @param modificationTime the file's modification time when Spark listed it
 * @param deletionVector the rows of the file a Delta table deleted; null when none are
 */
public record FileSplit(
    String path,
    long start,
    long length,
    long fileSize,
    long modificationTime,
    DeletionVector deletionVector)
    implements Serializable {
  /** A split of a file whose every row is read. */
  public FileSplit(String path, long start, long length, long fileSize, long modificationTime) {
    this(path, start, length, fileSize, modificationTime, null);
  }

  /** The file as the record of faulted files knows it: path, size and modification time. */
  public String identity() {
    return path + " (" + fileSize + " bytes, modified " + modificationTime + ")";
  }

  /** The file name alone, for messages. */
  public String fileName() {
    int slash = path.lastIndexOf('/');
    return slash < 0 ? path : path.substring(slash + 1);
  }
}
