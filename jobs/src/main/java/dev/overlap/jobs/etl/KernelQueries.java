package dev.overlap.jobs.etl;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.udf;

import dev.overlap.executor.api.GpuPartitions;
import dev.overlap.executor.api.PipelineReport;
import java.math.BigDecimal;
import java.math.RoundingMode;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.StructType;

/**
 * The {@value EtlJob#OVERLAP} engine's TPC-H Q1 and Q6: filters and derived columns run as GPU
 * kernels ({@link Q1Kernel}, {@link Q6Kernel}) partition by partition with partial aggregates per
 * batch, and Spark adds the partials up. The results take the types Spark SQL gives the same
 * queries over the same input, read from Spark's analysis of {@link SqlQueries}, so that results
 * compare equal (doubles up to the order of summation).
 */
final class KernelQueries {
  private KernelQueries() {}

  static Dataset<Row> q1(Dataset<Row> lineitem, EtlShape shape, PipelineReport report) {
    StructType want = SqlQueries.q1(lineitem, shape).schema(); // analysis only
    Dataset<Row> partial =
        GpuPartitions.map(
            lineitem.selectExpr(shape.select(Q1Kernel.INPUT)), new Q1Kernel(shape), report);
    // A few partial rows per batch: one partition adds them up, groups and sorts them, in one stage
    // after the kernels' (a single partition needs no exchange for the grouping or the order).
    return partial
        .repartition(1)
        .groupBy("l_returnflag", "l_linestatus")
        .agg(
            sum("sum_qty").as("q"),
            sum("sum_base_price").as("p"),
            sum("sum_disc_price").as("dp"),
            sum("sum_charge").as("c"),
            sum("sum_disc").as("d"),
            sum("count_qty").as("nq"),
            sum("count_price").as("np"),
            sum("count_disc").as("nd"),
            sum("count_order").as("n"))
        .select(
            col("l_returnflag"),
            col("l_linestatus"),
            total("q", want, "sum_qty"),
            total("p", want, "sum_base_price"),
            total("dp", want, "sum_disc_price"),
            total("c", want, "sum_charge"),
            average("q", "nq", shape.types[EtlShape.QUANTITY], want, "avg_qty"),
            average("p", "np", shape.types[EtlShape.PRICE], want, "avg_price"),
            average("d", "nd", shape.types[EtlShape.DISCOUNT], want, "avg_disc"),
            total("n", want, "count_order"))
        .orderBy("l_returnflag", "l_linestatus");
  }

  static Dataset<Row> q6(Dataset<Row> lineitem, EtlShape shape, PipelineReport report) {
    StructType want = SqlQueries.q6(lineitem, shape).schema(); // analysis only
    return GpuPartitions.map(
            lineitem.selectExpr(shape.select(Q6Kernel.INPUT)), new Q6Kernel(shape), report)
        .agg(sum("revenue").as("r"))
        .select(total("r", want, "revenue"));
  }

  /** The total of partial sums {@code col}, in the type of {@code name} in {@code want}. */
  private static Column total(String col, StructType want, String name) {
    return col(col).cast(want.apply(name).dataType()).as(name);
  }

  /**
   * The average of {@code sum} over {@code count} values as Spark computes {@code avg} of a column
   * of type {@code in}: for a decimal, the exact sum divided by the count, rounded half up to the
   * scale of Spark's result type; otherwise in double. Null when there are no values.
   */
  private static Column average(
      String sum, String count, DataType in, StructType want, String name) {
    DataType out = want.apply(name).dataType();
    if (in instanceof DecimalType && out instanceof DecimalType d) {
      int scale = d.scale();
      UserDefinedFunction div =
          udf(
              (UDF2<BigDecimal, Long, BigDecimal>)
                  (s, n) ->
                      s == null || n == null || n == 0
                          ? null
                          : s.divide(BigDecimal.valueOf(n), scale, RoundingMode.HALF_UP),
              d);
      return div.apply(col(sum), col(count)).as(name);
    } else if (out instanceof DoubleType) {
      return expr("cast(" + sum + " as double) / cast(nullif(" + count + ", 0) as double)")
          .as(name);
    }
    throw new IllegalStateException("avg of " + in.simpleString() + " is " + out.simpleString());
  }
}
