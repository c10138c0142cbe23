package dev.overlap.executor.spark;

import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.WholeStageCodegenExec;

/** What a job's input plan offers the GPU path. */
public final class ColumnarPlans {
  private ColumnarPlans() {}

  /**
   * The columnar plan under a plain columnar-to-row conversion (Spark's vectorized Parquet scan,
   * say), whose batches {@link PartitionRunner#runColumnar} packs column by column; null when there
   * is none.
   */
  public static SparkPlan columnarChild(SparkPlan plan) {
    SparkPlan p = plan;
    if (p instanceof WholeStageCodegenExec w) {
      p = w.child();
    }
    if (p instanceof ColumnarToRowExec c && c.child().supportsColumnar()) {
      return c.child();
    }
    return null;
  }
}
