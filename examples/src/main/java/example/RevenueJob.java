package example;

import dev.overlap.executor.api.GpuPartitions;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;

/** TPC-H Q6's revenue without its filter: the kernel's partial sums, finished by Spark. */
public final class RevenueJob {
  public static void main(String[] args) {
    SparkSession spark = SparkSession.builder().appName("revenue").getOrCreate();
    String path = args[0];
    Dataset<Row> partial =
        GpuPartitions.map(
            spark.read().parquet(path).select("l_extendedprice", "l_discount"), new Revenue());
    System.out.println("revenue " + partial.agg(functions.sum("revenue")).first().get(0));
    spark.stop();
  }
}
