package dev.overlap.executor.sql;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.GroupByAggregation;
import ai.rapids.cudf.GroupByAggregationOnColumn;
import ai.rapids.cudf.NullPolicy;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.CpuInstead;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DecimalType;

/**
 * A batch's partial aggregates on the GPU, one row per group (one row when there are no keys), in
 * the buffers Spark's final aggregate merges ({@link AggSpec}). A sum whose running total could
 * pass its bound in some order of adding goes to the CPU from the partition's start ({@link
 * CpuInstead}): Spark nulls, fails or rounds such a sum depending on the order, which the GPU does
 * not follow.
 */
final class GpuAggregates {
  private GpuAggregates() {}

  /** The keys' columns then each spec's buffer columns, as a table the caller closes. */
  static Table of(GpuEval g, List<Expression> keys, List<AggSpec> specs, RunningSums sums) {
    List<ColumnVector> cols = new ArrayList<>();
    for (Expression k : keys) {
      cols.add(g.column(k));
    }
    // Each spec's value column, made ready for cuDF's aggregations.
    List<ColumnVector> values = new ArrayList<>();
    for (int i = 0; i < specs.size(); i++) {
      AggSpec s = specs.get(i);
      values.add(s.child() == null ? null : value(g, s, i, sums));
    }
    return keys.isEmpty() ? reduced(g, specs, values) : grouped(g, cols, specs, values);
  }

  /**
   * The spec's aggregated column, widened as its sum is taken. A sum whose order of adding could
   * matter is charged the batch's largest value times its rows against its running bound ({@link
   * AggSpec#runningBound}), over all the task's batches so far: while the total stays under it, no
   * running sum in any order passes it, and the GPU's sum is Spark's.
   */
  private static ColumnVector value(GpuEval g, AggSpec s, int index, RunningSums sums) {
    ColumnVector v = g.column(s.child());
    BigInteger bound = s.runningBound();
    if (bound != null) {
      BigInteger max = DecimalMath.maxAbs(v);
      sums.charge(
          index,
          max.multiply(BigInteger.valueOf(g.rows())),
          bound,
          s.child().sql() + " could pass " + s.buffer().get(0).simpleString());
    }
    return switch (s.kind()) {
      case SUM_DECIMAL, AVG_DECIMAL ->
          g.own(
              v.castTo(
                  DType.create(
                      DType.DTypeEnum.DECIMAL128, -((DecimalType) s.child().dataType()).scale())));
      case SUM_LONG -> v.getType().equals(DType.INT64) ? v : g.own(v.castTo(DType.INT64));
      case AVG_DOUBLE -> v.getType().equals(DType.FLOAT64) ? v : g.own(v.castTo(DType.FLOAT64));
      default -> v;
    };
  }

  private static Table grouped(
      GpuEval g, List<ColumnVector> keys, List<AggSpec> specs, List<ColumnVector> values) {
    List<ColumnVector> in = new ArrayList<>(keys);
    List<GroupByAggregationOnColumn> aggs = new ArrayList<>();
    int k = keys.size();
    for (int i = 0; i < specs.size(); i++) {
      AggSpec s = specs.get(i);
      int c = in.size();
      in.add(values.get(i) == null ? keys.get(0) : values.get(i));
      switch (s.kind()) {
        case COUNT_ROWS -> aggs.add(GroupByAggregation.count(NullPolicy.INCLUDE).onColumn(c));
        case COUNT -> aggs.add(GroupByAggregation.count(NullPolicy.EXCLUDE).onColumn(c));
        case SUM_DECIMAL, AVG_DECIMAL, AVG_DOUBLE -> {
          aggs.add(GroupByAggregation.sum().onColumn(c));
          aggs.add(GroupByAggregation.count(NullPolicy.EXCLUDE).onColumn(c));
        }
        case SUM_LONG, SUM_DOUBLE -> aggs.add(GroupByAggregation.sum().onColumn(c));
        case MIN -> aggs.add(GroupByAggregation.min().onColumn(c));
        case MAX -> aggs.add(GroupByAggregation.max().onColumn(c));
      }
    }
    Table result;
    try (Table t = new Table(in.toArray(new ColumnVector[0]))) {
      int[] keyIdx = new int[k];
      for (int i = 0; i < k; i++) {
        keyIdx[i] = i;
      }
      result = g.own(t.groupBy(keyIdx).aggregate(aggs.toArray(new GroupByAggregationOnColumn[0])));
    }
    List<ColumnVector> out = new ArrayList<>();
    for (int i = 0; i < k; i++) {
      out.add(result.getColumn(i));
    }
    int r = k;
    for (AggSpec s : specs) {
      switch (s.kind()) {
        case COUNT_ROWS, COUNT -> out.add(g.own(result.getColumn(r++).castTo(DType.INT64)));
        case SUM_DECIMAL, AVG_DECIMAL, AVG_DOUBLE -> {
          ColumnVector sum = result.getColumn(r++);
          ColumnVector count = result.getColumn(r++);
          buffers(g, s, sum, count, out);
        }
        default -> out.add(result.getColumn(r++));
      }
    }
    return new Table(out.toArray(new ColumnVector[0]));
  }

  /** The two buffer columns of a decimal sum or an average from a group's sum and count. */
  private static void buffers(
      GpuEval g, AggSpec s, ColumnVector sum, ColumnVector count, List<ColumnVector> out) {
    DataType sumType = s.buffer().get(0);
    DType storage = GpuEval.dtype(sumType);
    try (Scalar zero = zero(sumType)) {
      ColumnVector filled = g.own(sum.replaceNulls(zero));
      out.add(filled.getType().equals(storage) ? filled : g.own(filled.castTo(storage)));
    }
    if (s.kind() == AggSpec.Kind.SUM_DECIMAL) {
      try (Scalar none = Scalar.fromInt(0)) {
        out.add(g.own(count.binaryOp(BinaryOp.EQUAL, none, DType.BOOL8)));
      }
    } else {
      out.add(g.own(count.castTo(DType.INT64)));
    }
  }

  private static Scalar zero(DataType sumType) {
    if (sumType instanceof DecimalType d) {
      return Scalar.fromDecimal(
          BigInteger.ZERO, DType.create(DType.DTypeEnum.DECIMAL128, -d.scale()));
    }
    return Scalar.fromDouble(0.0);
  }

  private static Table reduced(GpuEval g, List<AggSpec> specs, List<ColumnVector> values) {
    List<ColumnVector> out = new ArrayList<>();
    for (int i = 0; i < specs.size(); i++) {
      AggSpec s = specs.get(i);
      ColumnVector v = values.get(i);
      switch (s.kind()) {
        case COUNT_ROWS -> out.add(g.own(ColumnVector.fromLongs(g.rows())));
        case COUNT -> out.add(g.own(ColumnVector.fromLongs(v.getRowCount() - v.getNullCount())));
        case SUM_DECIMAL, AVG_DECIMAL, AVG_DOUBLE -> {
          ColumnVector sum = one(g, v.sum());
          ColumnVector count =
              g.own(ColumnVector.fromInts((int) (v.getRowCount() - v.getNullCount())));
          buffers(g, s, sum, count, out);
        }
        case SUM_LONG, SUM_DOUBLE -> out.add(one(g, v.sum()));
        case MIN -> out.add(one(g, v.min()));
        case MAX -> out.add(one(g, v.max()));
      }
    }
    return new Table(out.toArray(new ColumnVector[0]));
  }

  /** A reduction's scalar as a column of one row, owned by {@code g}. */
  private static ColumnVector one(GpuEval g, Scalar s) {
    try (s) {
      return g.own(ColumnVector.fromScalar(s, 1));
    }
  }
}
