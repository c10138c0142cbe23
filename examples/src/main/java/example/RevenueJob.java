package example;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.PipelineReport;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;

/**
 * TPC-H Q6's revenue without its filter: the kernel's partial sums, finished by Spark; then where
 * the time went (GPU stages, or the CPU tasks that ran the kernel's CPU implementation).
 */
public final class RevenueJob {
  public static void main(String[] args) {
    SparkSession spark = SparkSession.builder().appName("revenue").getOrCreate();
    String path = args[0];
    PipelineReport report = PipelineReport.create(spark);
    long start = System.nanoTime();
    Dataset<Row> partial =
        GpuPartitions.map(
            spark.read().parquet(path).select("l_extendedprice", "l_discount"),
            new Revenue(),
            report);
    System.out.println("revenue " + partial.agg(functions.sum("revenue")).first().get(0));
    int slots = spark.sparkContext().defaultParallelism();
    System.out.print(report.stageSummary(System.nanoTime() - start, slots));
    spark.stop();
  }
}
