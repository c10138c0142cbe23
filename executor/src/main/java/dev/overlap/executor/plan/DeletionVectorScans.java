package dev.overlap.executor.plan;

import dev.overlap.executor.input.parquet.delta.DeltaFormat;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.FilterExec;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.FileFormat;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A Delta table with deletion vectors, as Spark reads it through delta-spark: a scan of the table's
 * files in Delta's Parquet format, which adds a column that marks each row the file's deletion
 * vector lists, under Spark's filter of the marked rows and a selection of the table's columns.
 * When the files read by column name give the table's columns ({@link DeltaFormat#whyNotPlain}),
 * the GPU's Parquet scan decodes them and drops the listed rows itself ({@code DeletedRows}); the
 * scan's own batches, the marked rows dropped, are the host's path.
 */
final class DeletionVectorScans {
  private DeletionVectorScans() {}

  /**
   * Whether an optimized plan reads a Delta table whose files give its columns by name, under at
   * most a selection of columns (Delta's planner adds its filter of deleted rows later).
   */
  static boolean inLogicalPlan(LogicalPlan plan) {
    FileFormat f = RapidsInput.filesRead(plan);
    return f != null && DeltaFormat.isDelta(f) && DeltaFormat.plainFiles(f);
  }

  /**
   * The scan in a physical plan before Spark's preparations, its columns selected and its marking
   * column given; null when the plan is not a columnar scan of Delta's format set up for deletion
   * vectors, under Delta's filter of the marked rows (over at most Delta's selection of the columns
   * and its {@code _metadata} column) and at most a selection of columns.
   */
  static ColumnarPlans.Columnar beforePreparations(SparkPlan plan) {
    SparkPlan p = plan;
    ProjectExec project = null;
    if (p instanceof ProjectExec pr) {
      project = pr;
      p = pr.child();
    }
    if (!(p instanceof FilterExec f) || !keepsUnmarked(f.condition())) {
      return null;
    }
    p = f.child();
    if (p instanceof ProjectExec inner && passesColumns(inner)) {
      p = inner.child();
    }
    if (!(p instanceof FileSourceScanExec scan)
        || !scan.supportsColumnar()
        || scan.bucketedScan()
        || DeltaFormat.deletionVectorTable(scan.relation().fileFormat()) == null) {
      return null;
    }
    List<Attribute> out = CollectionConverters.asJava(scan.output());
    int marked = -1;
    for (int i = 0; i < out.size(); i++) {
      if (out.get(i).name().equals(DeltaFormat.DELETED_COLUMN)) {
        marked = i;
      }
    }
    if (marked < 0 || project == null) {
      return null;
    }
    ColumnarPlans.Columnar selected =
        ColumnarPlans.selected(scan, CollectionConverters.asJava(project.projectList()));
    if (selected == null) {
      return null;
    }
    for (int c : selected.columns()) {
      if (c == marked) {
        return null;
      }
    }
    return new ColumnarPlans.Columnar(scan, selected.columns(), marked);
  }

  /**
   * Whether Delta's projection under its filter passes the scan's columns on as they are, adding at
   * most the {@code _metadata} column built from the scan's file columns.
   */
  private static boolean passesColumns(ProjectExec p) {
    for (NamedExpression e : CollectionConverters.asJava(p.projectList())) {
      if (!(e instanceof Attribute) && !(e instanceof Alias a && a.name().equals("_metadata"))) {
        return false;
      }
    }
    return true;
  }

  /** Whether {@code e} is Delta's filter: the marking column equal to 0 (the row kept). */
  private static boolean keepsUnmarked(Expression e) {
    if (!(e instanceof EqualTo eq)) {
      return false;
    }
    return (marking(eq.left()) && zero(eq.right())) || (marking(eq.right()) && zero(eq.left()));
  }

  private static boolean marking(Expression e) {
    return e instanceof Attribute a && a.name().equals(DeltaFormat.DELETED_COLUMN);
  }

  private static boolean zero(Expression e) {
    return e instanceof Literal l
        && l.value() instanceof Number n
        && n.longValue() == 0
        && n.doubleValue() == 0;
  }
}
