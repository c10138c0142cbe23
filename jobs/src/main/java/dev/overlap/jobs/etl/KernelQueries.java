package dev.overlap.jobs.etl;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.udf;

import dev.overlap.executor.api.GpuKernel;
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
 * batch, in one Spark stage, and the driver adds the partials up ({@link PartialTotals}). The
 * results take the types Spark SQL gives the same queries over the same input, read from Spark's
 * analysis of {@link SqlQueries}, so that results compare equal (doubles up to the order of
 * summation).
 */
final class KernelQueries {
  private KernelQueries() {}

  /**
   * A query planned: the kernels' partial aggregates (planned, not run) and the result's schema as
   * Spark SQL types the same query. {@link #run} computes it.
   */
  record Planned(Dataset<Row> partial, StructType want, EtlShape shape, boolean q1) {
    /**
     * Runs the kernels' stage (one Spark job), adds their partials up on the driver and returns the
     * result as a local Dataset, whose actions run no further job.
     */
    Dataset<Row> run() {
      return q1 ? q1Totals(this) : q6Totals(this);
    }
  }

  /** Q1, planned and run. */
  static Dataset<Row> q1(Dataset<Row> lineitem, EtlShape shape, PipelineReport report) {
    return planQ1(lineitem, shape, report).run();
  }

  /** Q6, planned and run. */
  static Dataset<Row> q6(Dataset<Row> lineitem, EtlShape shape, PipelineReport report) {
    return planQ6(lineitem, shape, report).run();
  }

  static Planned planQ1(Dataset<Row> lineitem, EtlShape shape, PipelineReport report) {
    StructType want = SqlQueries.q1(lineitem, shape).schema(); // analysis only
    return plan(lineitem, shape, want, Q1Kernel.INPUT, new Q1Kernel(shape), report, true);
  }

  static Planned planQ6(Dataset<Row> lineitem, EtlShape shape, PipelineReport report) {
    StructType want = SqlQueries.q6(lineitem, shape).schema(); // analysis only
    return plan(lineitem, shape, want, Q6Kernel.INPUT, new Q6Kernel(shape), report, false);
  }

  /**
   * A query's kernel mapped over {@code lineitem}'s columns {@code input}, its result {@code want}.
   */
  private static Planned plan(
      Dataset<Row> lineitem,
      EtlShape shape,
      StructType want,
      int[] input,
      GpuKernel kernel,
      PipelineReport report,
      boolean q1) {
    Dataset<Row> partial =
        GpuPartitions.map(lineitem.selectExpr(shape.select(input)), kernel, report);
    return new Planned(partial, want, shape, q1);
  }

  /**
   * A few partial rows per batch, added up per group on the driver ({@link PartialTotals}), in the
   * order of the groups: the kernels' stage is the query's only one.
   */
  private static Dataset<Row> q1Totals(Planned p) {
    StructType want = p.want();
    EtlShape shape = p.shape();
    return PartialTotals.of(p.partial(), 2)
        .select(
            col("l_returnflag"),
            col("l_linestatus"),
            total("sum_qty", want, "sum_qty"),
            total("sum_base_price", want, "sum_base_price"),
            total("sum_disc_price", want, "sum_disc_price"),
            total("sum_charge", want, "sum_charge"),
            average("sum_qty", "count_qty", shape.types[EtlShape.QUANTITY], want, "avg_qty"),
            average(
                "sum_base_price", "count_price", shape.types[EtlShape.PRICE], want, "avg_price"),
            average("sum_disc", "count_disc", shape.types[EtlShape.DISCOUNT], want, "avg_disc"),
            total("count_order", want, "count_order"));
  }

  private static Dataset<Row> q6Totals(Planned p) {
    return PartialTotals.of(p.partial(), 0).select(total("revenue", p.want(), "revenue"));
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
