package dev.overlap.executor.output.parquet;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.OutputWriter;
import org.apache.spark.sql.types.StructType;

/**
 * The write mode without a GPU: the kernel's CPU implementation's rows through Spark's own Parquet
 * writer, under the same commit protocol as the GPU's files ({@link TaskFiles}).
 */
public final class CpuParquetWrite {
  private CpuParquetWrite() {}

  /** The rows through Spark's own Parquet writer, in files of {@code files}. */
  public static Wrote write(
      Iterator<InternalRow> rows, StructType outSchema, ParquetWrite write, TaskFiles files)
      throws IOException {
    long perFile = write.output().rowsPerFile();
    OutputWriter writer = null;
    List<String> paths = new ArrayList<>();
    long n = 0;
    long inFile = 0;
    try {
      while (rows.hasNext()) {
        InternalRow row = rows.next();
        if (writer == null) {
          String path = files.newFile(write.cpuWriter().getFileExtension(files.context()));
          paths.add(path);
          writer = write.cpuWriter().newInstance(path, outSchema, files.context());
        }
        writer.write(row);
        n++;
        inFile++;
        if (perFile > 0 && inFile >= perFile) {
          OutputWriter w = writer;
          writer = null;
          inFile = 0;
          w.close();
        }
      }
    } catch (Exception | Error e) { // Spark's writer throws IOException undeclared (a full disk)
      if (writer != null) {
        try {
          writer.close();
        } catch (Exception | Error c) {
          e.addSuppressed(c);
        }
      }
      throw e;
    }
    if (writer != null) {
      writer.close();
    }
    for (String path : paths) {
      files.addFileBytes(path);
    }
    return new Wrote(n, false);
  }
}
