package dev.overlap.jobs.etl;

import static org.apache.spark.sql.functions.expr;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * Spark SQL's own TPC-H Q1 and Q6 over {@code lineitem}, TPC-H's text with the input's own column
 * names: the {@value EtlJob#SPARK_SQL} engine's queries, and the result types the overlap engine's
 * queries ({@link KernelQueries}) take from Spark's analysis of them.
 */
final class SqlQueries {
  private SqlQueries() {}

  /** Q1, ordered as {@link KernelQueries#q1} is. */
  static Dataset<Row> q1(Dataset<Row> lineitem, EtlShape shape) {
    String q = shape.column(EtlShape.QUANTITY);
    String e = shape.column(EtlShape.PRICE);
    String d = shape.column(EtlShape.DISCOUNT);
    String t = shape.column(EtlShape.TAX);
    List<Column> aggs = new ArrayList<>();
    aggs.add(expr("sum(" + e + ")").as("sum_base_price"));
    aggs.add(expr("sum(" + e + " * (1 - " + d + "))").as("sum_disc_price"));
    aggs.add(expr("sum(" + e + " * (1 - " + d + ") * (1 + " + t + "))").as("sum_charge"));
    aggs.add(expr("avg(" + q + ")").as("avg_qty"));
    aggs.add(expr("avg(" + e + ")").as("avg_price"));
    aggs.add(expr("avg(" + d + ")").as("avg_disc"));
    aggs.add(expr("count(*)").as("count_order"));
    return lineitem
        .where(shape.column(EtlShape.SHIPDATE) + " <= date '1998-12-01' - interval '90' day")
        .groupBy(
            expr(shape.column(EtlShape.RETURNFLAG)).as("l_returnflag"),
            expr(shape.column(EtlShape.LINESTATUS)).as("l_linestatus"))
        .agg(expr("sum(" + q + ")").as("sum_qty"), aggs.toArray(new Column[0]))
        .orderBy("l_returnflag", "l_linestatus");
  }

  /** Q6. */
  static Dataset<Row> q6(Dataset<Row> lineitem, EtlShape shape) {
    String ship = shape.column(EtlShape.SHIPDATE);
    String d = shape.column(EtlShape.DISCOUNT);
    return lineitem
        .where(
            ship
                + " >= date '1994-01-01' and "
                + ship
                + " < date '1994-01-01' + interval '1' year and "
                + d
                + " between 0.06 - 0.01 and 0.06 + 0.01 and "
                + shape.column(EtlShape.QUANTITY)
                + " < 24")
        .agg(expr("sum(" + shape.column(EtlShape.PRICE) + " * " + d + ")").as("revenue"));
  }
}
