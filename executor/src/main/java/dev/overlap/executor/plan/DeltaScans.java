package dev.overlap.executor.plan;

import dev.overlap.executor.input.parquet.delta.DeltaFormat;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.LogicalRelation;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The Delta Lake tables a job's input reads, as the GPU's Parquet scan sees them. A table whose
 * files, read by their columns' names, give its rows is a plain Parquet scan to it ({@link
 * ColumnarPlans#decodesAsIs}); one with deletion vectors too, the rows they list dropped on the
 * device ({@link DeletionVectorScans}). Any other is read by Spark's Delta reader, and {@link
 * #whyNotDecoded} says why for the job's report.
 */
final class DeltaScans {
  private DeltaScans() {}

  /**
   * For each Delta table an optimized plan reads whose files the GPU's Parquet scan cannot decode
   * as Delta reads them, which table and why ({@link DeltaFormat#whyNotPlain}); empty when there is
   * none.
   */
  static List<String> whyNotDecoded(LogicalPlan plan) {
    List<String> out = new ArrayList<>();
    for (LogicalPlan leaf : CollectionConverters.asJava(plan.collectLeaves())) {
      if (!(leaf instanceof LogicalRelation r)
          || !(r.relation() instanceof HadoopFsRelation fs)
          || !DeltaFormat.isDelta(fs.fileFormat())) {
        continue;
      }
      String why = DeltaFormat.whyNotPlain(fs.fileFormat());
      if (why != null) {
        // A Delta table's file index has one root: the table's folder.
        String table = fs.location().rootPaths().mkString(", ");
        out.add(
            "the Delta table "
                + table
                + " is read by Spark's Delta reader, not the GPU's Parquet scan: "
                + why);
      }
    }
    return out;
  }
}
