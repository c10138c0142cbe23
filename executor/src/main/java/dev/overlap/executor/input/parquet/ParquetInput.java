package dev.overlap.executor.input.parquet;

import dev.overlap.executor.gpu.FaultedFiles;
import dev.overlap.executor.input.parquet.delta.DeletionVector;
import dev.overlap.executor.input.parquet.delta.DeltaFormat;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.datasources.FilePartition;
import org.apache.spark.sql.execution.datasources.FileScanRDD;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A Parquet scan as the GPU path reads it: the file splits of each of the scan's partitions (as
 * Spark planned them), the columns the kernel reads, and the Hadoop configuration to open the files
 * with. Serialized with the job's closure.
 */
public final class ParquetInput implements Serializable {
  private static final long serialVersionUID = 1L;

  private final FileSplit[][] partitions;
  private final ScanColumns columns;
  private final SerializableConfiguration conf;
  // The driver's record of files the GPU must not decode, when this scan was planned.
  private final Map<String, String> faulted;

  private ParquetInput(FileSplit[][] partitions, ScanColumns columns, Configuration conf) {
    this.partitions = partitions;
    this.columns = columns;
    this.conf = new SerializableConfiguration(conf);
    this.faulted = FaultedFiles.snapshot();
  }

  /**
   * The GPU path's view of {@code scan}, whose columns {@code names} the kernel reads as {@code
   * kernelInput}; null when the scan's partitions are not file partitions. A scan of a Delta table
   * with deletion vectors gives each file's vector with it.
   */
  public static ParquetInput of(
      FileSourceScanExec scan, String[] names, StructType kernelInput, SparkSession spark) {
    RDD<?> rdd = scan.inputRDD();
    if (!(rdd instanceof FileScanRDD files)) {
      return null;
    }
    // A Delta table's scan with deletion vectors: each file's vector comes with the file.
    String table = DeltaFormat.deletionVectorTable(scan.relation().fileFormat());
    List<FilePartition> parts = CollectionConverters.asJava(files.filePartitions());
    FileSplit[][] splits = new FileSplit[parts.size()][];
    for (FilePartition p : parts) {
      PartitionedFile[] fs = p.files();
      FileSplit[] s = new FileSplit[fs.length];
      for (int i = 0; i < fs.length; i++) {
        PartitionedFile f = fs[i];
        DeletionVector dv = null;
        if (table != null) {
          if (!DeltaFormat.dropsListedRows(f)) {
            return null; // a vector that keeps the rows it lists (a change feed's read)
          }
          dv = DeltaFormat.deletionVector(f, table);
        }
        s[i] =
            new FileSplit(
                f.toPath().toUri().toString(),
                f.start(),
                f.length(),
                f.fileSize(),
                f.modificationTime(),
                dv);
      }
      splits[p.index()] = s;
    }
    var session = (org.apache.spark.sql.classic.SparkSession) spark;
    Configuration conf = session.sessionState().newHadoopConfWithOptions(scan.relation().options());
    ScanColumns columns =
        new ScanColumns(
            names,
            kernelInput,
            session.sessionState().conf().caseSensitiveAnalysis(),
            spark.conf().get("spark.sql.parquet.datetimeRebaseModeInRead"));
    return new ParquetInput(splits, columns, conf);
  }

  /**
   * Plans partition {@code partition}'s splits.
   *
   * @throws NotForGpu for the first file the GPU would not read exactly as Spark does, or whose
   *     decode failed fatally on a GPU before ({@link FaultedFiles})
   */
  public List<FilePlan> plan(int partition) throws IOException, NotForGpu {
    String faultedBefore = faulted(partition);
    if (faultedBefore != null) {
      throw new NotForGpu(faultedBefore);
    }
    List<FilePlan> out = new ArrayList<>();
    for (FileSplit s : partitions[partition]) {
      out.add(FilePlan.of(s, columns, conf.value()));
    }
    return out;
  }

  /**
   * Why partition {@code partition} must not be decoded on the GPU because one of its files faulted
   * a GPU before ({@link FaultedFiles}: the driver's record when this scan was planned, or this
   * process's); null when none did. Opens no file.
   */
  public String faulted(int partition) {
    for (FileSplit s : partitions[partition]) {
      String why = FaultedFiles.why(s.identity(), faulted);
      if (why != null) {
        return why;
      }
    }
    return null;
  }

  public Configuration conf() {
    return conf.value();
  }
}
