package dev.overlap.jobs.delta;

import dev.overlap.executor.input.parquet.delta.DeltaFormat;
import dev.overlap.jobs.cli.UsageException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import org.apache.spark.sql.DataFrameReader;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.delta.actions.AddFile;
import org.apache.spark.sql.delta.files.TahoeFileIndex;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.LogicalRelation;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A Delta Lake table read as a table ({@code --format delta}): the rows of one version, never the
 * folder's other files (older versions' files, files rewritten by an update or a delete). Spark's
 * Delta reader ({@code spark.read.format("delta")}) defines the rows. When a version's files read
 * as plain Parquet give the same rows, they are given as plain Parquet files, which the GPU's
 * Parquet scan decodes itself: no file has a deletion vector (rows deleted in place), no column is
 * mapped to another name in the files, no partition column comes from the log, no column's type was
 * widened since older files were written, and no other reader feature changes the files' meaning.
 * Otherwise Spark's Delta reader reads the table, and the line the summary shows says why. Where
 * deletion vectors are the only reason, the GPU's Parquet scan still decodes the files and drops
 * the rows the vectors list on the device (the executor's {@code input/parquet/delta}); other
 * reasons take the row or columnar input.
 */
public final class DeltaInput {
  private final Dataset<Row> rows;
  private final String line;
  private final boolean asParquetFiles;

  private DeltaInput(Dataset<Row> rows, String line, boolean asParquetFiles) {
    this.rows = rows;
    this.line = line;
    this.asParquetFiles = asParquetFiles;
  }

  /** The table's rows, as the job reads them. */
  public Dataset<Row> rows() {
    return rows;
  }

  /** Which version was read, how many files it has, and how they are read (and why). */
  public String line() {
    return line;
  }

  /** Whether the version's files are read as plain Parquet (else by Spark's Delta reader). */
  public boolean asParquetFiles() {
    return asParquetFiles;
  }

  /**
   * Reads the Delta table at {@code path}, at {@code version} or its latest.
   *
   * @throws UsageException when the session lacks delta-spark or its extension, or the table has no
   *     such version
   */
  public static DeltaInput read(SparkSession spark, String path, OptionalLong version) {
    DeltaSetup.check(k -> spark.conf().get(k, null), DeltaInput.class.getClassLoader());
    Dataset<Row> table = spark.read().format("delta").load(path);
    if (version.isPresent()) {
      long latest = fileIndex(table).version();
      if (version.getAsLong() > latest) {
        throw new UsageException(
            "--version "
                + version.getAsLong()
                + ": the Delta table '"
                + path
                + "' has versions up to "
                + latest
                + "; give one of them, or drop --version for the latest");
      }
      DataFrameReader reader = spark.read().format("delta");
      table = reader.option("versionAsOf", version.getAsLong()).load(path);
    }
    TahoeFileIndex index = fileIndex(table);
    Seq<org.apache.spark.sql.catalyst.expressions.Expression> none =
        CollectionConverters.asScala(
                new ArrayList<org.apache.spark.sql.catalyst.expressions.Expression>())
            .toList();
    List<AddFile> files = CollectionConverters.asJava(index.matchingFiles(none, none));
    String head =
        String.format(
            Locale.ROOT,
            "'%s' version %d%s, %d files",
            path,
            index.version(),
            version.isPresent() ? " (--version)" : " (the latest)",
            files.size());
    String why = whyNotPlain(index, files);
    if (why != null) {
      return new DeltaInput(table, head + ", read by Spark's Delta reader: " + why, false);
    }
    String[] paths = new String[files.size()];
    for (int i = 0; i < paths.length; i++) {
      paths[i] = index.absolutePath(files.get(i).path()).toString();
    }
    // The file names as they are: none is a glob.
    Dataset<Row> plain =
        spark.read().schema(table.schema()).option("__globPaths__", "false").parquet(paths);
    return new DeltaInput(
        plain,
        head
            + ", read as plain Parquet files, which the GPU's Parquet scan decodes (no deletion"
            + " vectors, no column mapping, no partition columns)",
        true);
  }

  /** Why the version's files cannot be read as plain Parquet files; null when they can. */
  static String whyNotPlain(TahoeFileIndex index, List<AddFile> files) {
    String why = DeltaFormat.whyNotPlain(index.metadata(), index.protocol());
    if (why != null) {
      return why;
    }
    if (files.isEmpty()) {
      return "the version has no files";
    }
    long withVectors = files.stream().filter(f -> f.deletionVector() != null).count();
    if (withVectors > 0) {
      return withVectors
          + " of "
          + files.size()
          + " files have deletion vectors (rows deleted without rewriting the file), which the"
          + " GPU's Parquet scan applies to the files it decodes";
    }
    return null;
  }

  /** The Delta file index under the table's plan. */
  static TahoeFileIndex fileIndex(Dataset<Row> table) {
    LogicalPlan plan = ((org.apache.spark.sql.classic.Dataset<Row>) table).logicalPlan();
    for (LogicalPlan leaf : CollectionConverters.asJava(plan.collectLeaves())) {
      if (leaf instanceof LogicalRelation r
          && r.relation() instanceof HadoopFsRelation fs
          && fs.location() instanceof TahoeFileIndex index) {
        return index;
      }
    }
    throw new IllegalStateException("no Delta file index in the plan of a Delta read: " + plan);
  }
}
