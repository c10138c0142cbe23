package dev.overlap.executor.plan;

import dev.overlap.executor.input.parquet.delta.DeltaFormat;
import dev.overlap.executor.task.Iterators;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.InputAdapter;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.WholeStageCodegenExec;
import org.apache.spark.sql.execution.datasources.FileFormat;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.jdk.javaapi.CollectionConverters;

/** What a job's input plan offers the GPU path. */
public final class ColumnarPlans {
  private ColumnarPlans() {}

  /**
   * A columnar plan under a plain columnar-to-row conversion, and which of its columns the input
   * has, in order: a plain selection or renaming of columns above the conversion is taken here.
   *
   * @param plan the columnar plan (Spark's vectorized Parquet scan, say)
   * @param columns for each column of the input, its index in {@code plan}'s output
   * @param deletedColumn for a scan of a Delta table with deletion vectors, the index in {@code
   *     plan}'s output of Delta's column that marks a deleted row ({@link DeletionVectorScans});
   *     else -1
   */
  public record Columnar(SparkPlan plan, int[] columns, int deletedColumn) {
    /** A plan whose every row is the input's. */
    public Columnar(SparkPlan plan, int[] columns) {
      this(plan, columns, -1);
    }

    private boolean identity() {
      return isIdentity(columns, plan.output().size());
    }

    /**
     * The scan when {@link #plan} is a Parquet file scan whose files the GPU decodes as they are
     * ({@link #decodesAsIs}; for a Delta table with deletion vectors, {@link
     * DeltaFormat#deletionVectorTable}) and every selected column is a column of the files (not a
     * partition or metadata column); else null.
     */
    public FileSourceScanExec parquetScan() {
      if (!(plan instanceof FileSourceScanExec s)) {
        return null;
      }
      FileFormat format = s.relation().fileFormat();
      boolean files =
          deletedColumn < 0 ? decodesAsIs(format) : DeltaFormat.deletionVectorTable(format) != null;
      if (!files) {
        return null;
      }
      List<String> dataColumns = List.of(s.requiredSchema().fieldNames());
      List<Attribute> out = CollectionConverters.asJava(plan.output());
      for (int c : columns) {
        if (!dataColumns.contains(out.get(c).name())) {
          return null;
        }
      }
      return s;
    }

    /** The selected columns' names in {@link #plan}'s output. */
    public String[] names() {
      List<Attribute> out = CollectionConverters.asJava(plan.output());
      String[] n = new String[columns.length];
      for (int i = 0; i < n.length; i++) {
        n[i] = out.get(columns[i]).name();
      }
      return n;
    }
  }

  /**
   * Whether {@code format} is Spark's own Parquet format, which reads each column by its name in
   * the files, as the GPU scan does. A subclass may read the files otherwise (Delta Lake's maps
   * logical names to physical ones and drops deleted rows): Spark's own reader reads it.
   */
  public static boolean isPlainParquet(FileFormat format) {
    return format.getClass() == ParquetFileFormat.class;
  }

  /**
   * Whether the GPU's Parquet scan, reading each file's columns by their names, gives the rows a
   * scan in {@code format} gives: Spark's own Parquet format ({@link #isPlainParquet}), or Delta
   * Lake's for a table whose files are plain Parquet with no deletion vectors to apply ({@link
   * DeltaFormat#plainTable}).
   */
  public static boolean decodesAsIs(FileFormat format) {
    return isPlainParquet(format) || DeltaFormat.plainTable(format);
  }

  /**
   * The columnar plan under a plain columnar-to-row conversion, with the columns of {@code plan}'s
   * output taken from it; null when {@code plan} is anything else.
   */
  public static Columnar columnar(SparkPlan plan) {
    SparkPlan p = plan;
    if (p instanceof WholeStageCodegenExec w) {
      p = w.child();
    }
    List<NamedExpression> projection = null;
    if (p instanceof ProjectExec pr) {
      projection = CollectionConverters.asJava(pr.projectList());
      p = pr.child();
    }
    if (p instanceof InputAdapter a) {
      p = a.child();
    }
    if (!(p instanceof ColumnarToRowExec c) || !c.child().supportsColumnar()) {
      return null;
    }
    SparkPlan leaf = c.child();
    if (leaf instanceof InputAdapter a) {
      leaf = a.child();
    }
    return selected(leaf, projection);
  }

  /**
   * A columnar file scan in a physical plan before Spark's preparations ({@code
   * QueryExecution.sparkPlan()}: no columnar-to-row conversion, no code generation stages yet),
   * under at most a plain selection or renaming of columns; null when {@code plan} is anything
   * else, or a bucketed scan. Extensions that replace operators in columnar rules (the RAPIDS
   * Accelerator's scan among them) have not run on such a plan.
   */
  public static Columnar scanBeforePreparations(SparkPlan plan) {
    SparkPlan p = plan;
    List<NamedExpression> projection = null;
    if (p instanceof ProjectExec pr) {
      projection = CollectionConverters.asJava(pr.projectList());
      p = pr.child();
    }
    if (!(p instanceof FileSourceScanExec scan) || !scan.supportsColumnar()) {
      return null;
    }
    if (scan.bucketedScan()) {
      // Spark's preparations may still turn an unneeded bucketed scan into a plain one (one task
      // per bucket otherwise): such a scan is taken from the prepared plan only.
      return null;
    }
    return selected(scan, projection);
  }

  /** {@code leaf} with the columns {@code projection} selects; all of them when it is null. */
  static Columnar selected(SparkPlan leaf, List<NamedExpression> projection) {
    List<Attribute> out = CollectionConverters.asJava(leaf.output());
    if (projection == null) {
      int[] all = new int[out.size()];
      for (int i = 0; i < all.length; i++) {
        all[i] = i;
      }
      return new Columnar(leaf, all);
    }
    List<Integer> cols = new ArrayList<>();
    for (NamedExpression e : projection) {
      Object x = e instanceof Alias al ? al.child() : e;
      if (!(x instanceof Attribute attr)) {
        return null;
      }
      int found = -1;
      for (int i = 0; i < out.size(); i++) {
        if (out.get(i).exprId().equals(attr.exprId())) {
          found = i;
        }
      }
      if (found < 0) {
        return null;
      }
      cols.add(found);
    }
    return new Columnar(leaf, cols.stream().mapToInt(Integer::intValue).toArray());
  }

  private static boolean isIdentity(int[] columns, int width) {
    if (columns.length != width) {
      return false;
    }
    for (int i = 0; i < columns.length; i++) {
      if (columns[i] != i) {
        return false;
      }
    }
    return true;
  }

  /** Columns {@code columns} of one batch, in that order (no copy). */
  public static ColumnarBatch select(int[] columns, ColumnarBatch b) {
    if (isIdentity(columns, b.numCols())) {
      return b;
    }
    ColumnVector[] v = new ColumnVector[columns.length];
    for (int i = 0; i < v.length; i++) {
      v[i] = b.column(columns[i]);
    }
    return new ColumnarBatch(v, b.numRows());
  }

  /** Columns {@code columns} of each batch. */
  public static Iterator<ColumnarBatch> select(int[] columns, Iterator<ColumnarBatch> batches) {
    return Iterators.map(batches, b -> select(columns, b));
  }
}
