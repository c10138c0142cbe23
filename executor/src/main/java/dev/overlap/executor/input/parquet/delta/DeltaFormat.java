package dev.overlap.executor.input.parquet.delta;

import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.sql.delta.DeltaParquetFileFormat;
import org.apache.spark.sql.delta.RowIndexFilterType;
import org.apache.spark.sql.delta.actions.Metadata;
import org.apache.spark.sql.delta.actions.Protocol;
import org.apache.spark.sql.execution.datasources.FileFormat;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * What Delta Lake's Parquet format asks of a reader beyond Spark's: whether a table's files read by
 * column name give the table's columns (no column mapping, no widened types, no reader feature that
 * changes the files' meaning), and where its deletion vectors lie. Delta's classes load only once a
 * plan's format is named Delta's ({@link #isDelta}), so a session without delta-spark never needs
 * them.
 */
public final class DeltaFormat {
  /** Delta Lake's Parquet format, by name: comparing names loads none of Delta's classes. */
  static final String FORMAT_CLASS = "org.apache.spark.sql.delta.DeltaParquetFileFormat";

  /** Reader features that leave a version's files plain Parquet (the others are checked apart). */
  private static final Set<String> PLAIN_FEATURES =
      Set.of(
          "deletionVectors", // per file: dropped by the scan (DeletedRows), or Spark's reader
          "columnMapping", // by the table's mode, below
          "typeWidening", // by the schema's record of type changes, below
          "typeWidening-preview",
          "timestampNtz",
          "variantType",
          "variantType-preview",
          "v2Checkpoint",
          "vacuumProtocolCheck");

  /** Delta's record of a column's earlier types, in the column's metadata. */
  private static final String TYPE_CHANGES = "delta.typeChanges";

  private DeltaFormat() {}

  /** Whether {@code format} is Delta Lake's Parquet format. */
  public static boolean isDelta(FileFormat format) {
    return format.getClass().getName().equals(FORMAT_CLASS);
  }

  /**
   * Why a Delta table's files, read by their columns' names, would not give its rows' columns (the
   * rows its deletion vectors list aside); null when they would.
   */
  public static String whyNotPlain(Metadata meta, Protocol protocol) {
    String mode = meta.columnMappingMode().name();
    if (!mode.equals("none")) {
      return "its columns are mapped to other names in the files (column mapping, mode "
          + mode
          + ")";
    }
    if (!meta.partitionColumns().isEmpty()) {
      return "its partition columns ("
          + String.join(", ", CollectionConverters.asJava(meta.partitionColumns()))
          + ") come from the log";
    }
    if (meta.schema().json().contains(TYPE_CHANGES)) {
      return "a column's type was widened since older files were written (" + TYPE_CHANGES + ")";
    }
    Set<String> features = protocol.getReaderFeatures();
    Set<String> other = new TreeSet<>(features == null ? Set.of() : features);
    other.removeAll(PLAIN_FEATURES);
    if (!other.isEmpty()) {
      return "it uses the reader feature " + String.join(", ", other);
    }
    return null;
  }

  /**
   * Why the files of {@code format}'s scan, Delta's, read by their columns' names would not give
   * the rows Delta's reader gives (the rows deletion vectors list aside); null when they would.
   */
  public static String whyNotPlain(FileFormat format) {
    DeltaParquetFileFormat delta = (DeltaParquetFileFormat) format;
    if (delta.isCDCRead()) {
      return "it is read as a change feed";
    }
    return whyNotPlain(delta.metadata(), delta.protocol());
  }

  /**
   * Whether {@code format}, Delta's, reads a table whose files give its columns by their names
   * ({@link #whyNotPlain}).
   */
  public static boolean plainFiles(FileFormat format) {
    return whyNotPlain(format) == null;
  }

  /**
   * Whether {@code format} is Delta's for a table whose files, read by their columns' names, give
   * its rows as they are: plain files ({@link #plainFiles}) and no deletion vectors to apply
   * (Delta's planner gives the format the table's path for those: {@link #deletionVectorTable}).
   */
  public static boolean plainTable(FileFormat format) {
    return isDelta(format)
        && ((DeltaParquetFileFormat) format).tablePath().isEmpty()
        && plainFiles(format);
  }

  /**
   * The table's folder when {@code format} is Delta's format set up for deletion vectors (Delta's
   * planner gives it the table's path then) and its files read as plain Parquet; else null.
   */
  public static String deletionVectorTable(FileFormat format) {
    if (!isDelta(format)) {
      return null;
    }
    DeltaParquetFileFormat delta = (DeltaParquetFileFormat) format;
    if (delta.tablePath().isEmpty() || !plainFiles(format)) {
      return null;
    }
    return delta.tablePath().get();
  }

  /**
   * The deletion vector Delta's file index gave {@code file} of the table at {@code table}; null
   * when it has none.
   *
   * @throws IllegalArgumentException when the vector keeps the rows it lists instead of dropping
   *     them (a change feed's read), which only Delta's reader reads ({@link #dropsListedRows})
   */
  public static DeletionVector deletionVector(PartitionedFile file, String table) {
    if (!dropsListedRows(file)) {
      throw new IllegalArgumentException(file.filePath() + ": its vector keeps the rows it lists");
    }
    Option<Object> d =
        metadata(file).get(DeltaParquetFileFormat.FILE_ROW_INDEX_FILTER_ID_ENCODED());
    return d.isEmpty() ? null : new DeletionVector((String) d.get(), table);
  }

  /** Whether {@code file} has no deletion vector, or one whose listed rows are dropped. */
  public static boolean dropsListedRows(PartitionedFile file) {
    scala.collection.immutable.Map<String, Object> m = metadata(file);
    Option<Object> d = m.get(DeltaParquetFileFormat.FILE_ROW_INDEX_FILTER_ID_ENCODED());
    Option<Object> type = m.get(DeltaParquetFileFormat.FILE_ROW_INDEX_FILTER_TYPE());
    if (d.isEmpty() && type.isEmpty()) {
      return true;
    }
    return d.nonEmpty() && type.nonEmpty() && type.get() == RowIndexFilterType.IF_CONTAINED;
  }

  private static scala.collection.immutable.Map<String, Object> metadata(PartitionedFile file) {
    return file.otherConstantMetadataColumnValues();
  }

  /**
   * The column Delta's scan of a table with deletion vectors adds, by name (Delta's {@code
   * IS_ROW_DELETED_COLUMN_NAME}; a test holds them equal): 0 for a row kept, else the row is
   * deleted.
   */
  public static final String DELETED_COLUMN = "__delta_internal_is_row_deleted";
}
