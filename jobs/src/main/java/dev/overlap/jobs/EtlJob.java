package dev.overlap.jobs;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.PipelineReport;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * TPC-H Q1 and Q6 over Parquet {@code lineitem}: filters and derived columns run as GPU kernels
 * partition by partition with partial aggregates per batch; Spark adds the partials up. Result
 * types are those Spark gives the same queries, so results compare equal.
 */
public final class EtlJob {
  private EtlJob() {}

  public static Dataset<Row> q1(Dataset<Row> lineitem, PipelineReport report) {
    Dataset<Row> partial =
        GpuPartitions.map(lineitem.selectExpr(Q1Kernel.INPUT), new Q1Kernel(), report);
    return partial
        .groupBy("l_returnflag", "l_linestatus")
        .agg(
            org.apache.spark.sql.functions.sum("sum_qty").as("q"),
            org.apache.spark.sql.functions.sum("sum_base_price").as("p"),
            org.apache.spark.sql.functions.sum("sum_disc_price").as("dp"),
            org.apache.spark.sql.functions.sum("sum_charge").as("c"),
            org.apache.spark.sql.functions.sum("sum_disc").as("d"),
            org.apache.spark.sql.functions.sum("count_order").as("n"))
        .selectExpr(
            "l_returnflag",
            "l_linestatus",
            "cast(q as decimal(22,2)) as sum_qty",
            "cast(p as decimal(22,2)) as sum_base_price",
            "cast(dp as decimal(36,4)) as sum_disc_price",
            "cast(c as decimal(38,6)) as sum_charge",
            // Spark's avg(decimal(12,2)): sum as decimal(22,2) over count as decimal(20,0).
            "cast(cast(q as decimal(22,2)) / cast(n as decimal(20,0)) as decimal(16,6)) as avg_qty",
            "cast(cast(p as decimal(22,2)) / cast(n as decimal(20,0)) as decimal(16,6))"
                + " as avg_price",
            "cast(cast(d as decimal(22,2)) / cast(n as decimal(20,0)) as decimal(16,6)) as avg_disc",
            "n as count_order")
        .orderBy("l_returnflag", "l_linestatus");
  }

  public static Dataset<Row> q6(Dataset<Row> lineitem, PipelineReport report) {
    return GpuPartitions.map(lineitem.selectExpr(Q6Kernel.INPUT), new Q6Kernel(), report)
        .selectExpr("cast(sum(revenue) as decimal(35,4)) as revenue");
  }

  /** Runs both queries, prints them, writes them under {@code output}; returns the Q1 rows. */
  static long run(SparkSession spark, String input, String output, JobSummary summary) {
    Dataset<Row> lineitem = spark.read().parquet(input);
    PipelineReport r1 = PipelineReport.create(spark);
    Dataset<Row> q1 = q1(lineitem, r1).cache();
    q1.write().mode("overwrite").parquet(output + "/q1");
    PipelineReport r6 = PipelineReport.create(spark);
    Dataset<Row> q6 = q6(lineitem, r6).cache();
    q6.write().mode("overwrite").parquet(output + "/q6");
    System.out.println("TPC-H Q1 (pricing summary):");
    q1.show(false);
    System.out.println("TPC-H Q6 (forecast revenue change):");
    q6.show(false);
    summary.add("Q1", r1);
    summary.add("Q6", r6);
    long rows = q1.count() + q6.count();
    q1.unpersist();
    q6.unpersist();
    return rows;
  }
}
