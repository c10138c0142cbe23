package dev.overlap.executor.input.parquet;

import java.io.Serializable;
import org.apache.spark.sql.types.StructType;

/**
 * What a kernel reads from a Parquet scan: for each column of its input, the name the scan reads
 * from the files; and the session settings that decide how a file's columns are matched.
 *
 * @param fileNames per kernel input column, the column's name in the scanned relation
 * @param kernelSchema the kernel's input schema (its types are what the scan produces)
 * @param caseSensitive {@code spark.sql.caseSensitive}
 * @param rebaseMode {@code spark.sql.parquet.datetimeRebaseModeInRead}, for files whose writer does
 *     not say which calendar it used
 */
public record ScanColumns(
    String[] fileNames, StructType kernelSchema, boolean caseSensitive, String rebaseMode)
    implements Serializable {
  public ScanColumns {
    if (fileNames.length != kernelSchema.fields().length) {
      throw new IllegalArgumentException(
          fileNames.length + " names for " + kernelSchema.fields().length + " columns");
    }
  }
}
