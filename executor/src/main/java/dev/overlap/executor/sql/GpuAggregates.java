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
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
    // Each spec's value column, made ready for cuDF's aggregations; one per expression and form.
    Map<List<Object>, ColumnVector> made = new HashMap<>();
    List<ColumnVector> values = new ArrayList<>();
    for (int i = 0; i < specs.size(); i++) {
      AggSpec s = specs.get(i);
      values.add(s.child() == null ? null : value(g, s, i, sums, made));
    }
    return keys.isEmpty() ? reduced(g, specs, values) : grouped(g, cols, specs, values);
  }

  /**
   * The spec's aggregated column, widened as its sum is taken. A sum whose order of adding could
   * matter is charged the batch's largest value times its rows against its running bound ({@link
   * AggSpec#runningBound}), over all the task's batches so far: while the total stays under it, no
   * running sum in any order passes it, and the GPU's sum is Spark's.
   *
   * <p>A decimal sum is taken in 64 bits when the batch's largest value times its rows is under
   * 10^18, so no partial sum can overflow: cuDF sums 128-bit values only by sorting the whole batch
   * (no 128-bit atomics for its hash aggregation), which costs most of a batch's time.
   */
  private static ColumnVector value(
      GpuEval g, AggSpec s, int index, RunningSums sums, Map<List<Object>, ColumnVector> made) {
    ColumnVector v = g.column(s.child());
    BigInteger bound = s.runningBound();
    BigInteger batch = null;
    if (s.child().dataType() instanceof DecimalType) {
      batch = g.bound(s.child()).multiply(BigInteger.valueOf(g.rows()));
    }
    if (bound != null) {
      sums.charge(
          index, batch, bound, s.child().sql() + " could pass " + s.buffer().get(0).simpleString());
    }
    DType target =
        switch (s.kind()) {
          case SUM_DECIMAL, AVG_DECIMAL ->
              DType.create(
                  batch.compareTo(LONG_SUMS) < 0
                      ? DType.DTypeEnum.DECIMAL64
                      : DType.DTypeEnum.DECIMAL128,
                  -((DecimalType) s.child().dataType()).scale());
          case SUM_LONG -> DType.INT64;
          case AVG_DOUBLE -> DType.FLOAT64;
          default -> v.getType();
        };
    if (v.getType().equals(target)) {
      return v;
    }
    return made.computeIfAbsent(
        List.of(s.child().canonicalized(), target), k -> g.own(v.castTo(target)));
  }

  /** Decimal sums whose bound is under this are taken in 64 bits. */
  private static final BigInteger LONG_SUMS = BigInteger.TEN.pow(18);

  private static Table grouped(
      GpuEval g, List<ColumnVector> keys, List<AggSpec> specs, List<ColumnVector> values) {
    int k = keys.size();
    List<ColumnVector> in = new ArrayList<>(keys);
    // The same aggregation of the same column is asked once (Q1's sum and avg of a column).
    Map<List<Object>, Integer> asked = new LinkedHashMap<>();
    List<GroupByAggregationOnColumn> aggs = new ArrayList<>();
    List<int[]> at = new ArrayList<>(); // each spec's result columns
    for (int i = 0; i < specs.size(); i++) {
      AggSpec s = specs.get(i);
      ColumnVector v = values.get(i) == null ? keys.get(0) : values.get(i);
      int c = in.indexOf(v);
      if (c < 0) {
        c = in.size();
        in.add(v);
      }
      List<String> ops =
          switch (s.kind()) {
            case COUNT_ROWS -> List.of("rows");
            case COUNT -> List.of("count");
            case SUM_DECIMAL, AVG_DECIMAL, AVG_DOUBLE -> List.of("sum", "count");
            case SUM_LONG, SUM_DOUBLE -> List.of("sum");
            case MIN -> List.of("min");
            case MAX -> List.of("max");
          };
      int[] results = new int[ops.size()];
      for (int j = 0; j < ops.size(); j++) {
        String op = ops.get(j);
        List<Object> key = op.equals("rows") ? List.of(op) : List.of(op, c);
        Integer r = asked.get(key);
        if (r == null) {
          r = k + aggs.size();
          asked.put(key, r);
          aggs.add(aggregation(op).onColumn(c));
        }
        results[j] = r;
      }
      at.add(results);
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
    for (int i = 0; i < specs.size(); i++) {
      AggSpec s = specs.get(i);
      int[] r = at.get(i);
      switch (s.kind()) {
        case COUNT_ROWS, COUNT -> out.add(g.own(result.getColumn(r[0]).castTo(DType.INT64)));
        case SUM_DECIMAL, AVG_DECIMAL, AVG_DOUBLE ->
            buffers(g, s, result.getColumn(r[0]), result.getColumn(r[1]), out);
        default -> out.add(result.getColumn(r[0]));
      }
    }
    return new Table(out.toArray(new ColumnVector[0]));
  }

  private static GroupByAggregation aggregation(String op) {
    return switch (op) {
      case "rows" -> GroupByAggregation.count(NullPolicy.INCLUDE);
      case "count" -> GroupByAggregation.count(NullPolicy.EXCLUDE);
      case "sum" -> GroupByAggregation.sum();
      case "min" -> GroupByAggregation.min();
      case "max" -> GroupByAggregation.max();
      default -> throw new IllegalStateException("aggregation " + op);
    };
  }

  /** The two buffer columns of a decimal sum or an average from a group's sum and count. */
  private static void buffers(
      GpuEval g, AggSpec s, ColumnVector sum, ColumnVector count, List<ColumnVector> out) {
    DataType sumType = s.buffer().get(0);
    DType storage = GpuEval.dtype(sumType);
    ColumnVector stored = sum.getType().equals(storage) ? sum : g.own(sum.castTo(storage));
    // A group whose every value was null has the sum 0 in Spark's buffer, not null.
    try (Scalar zero = zero(sumType, storage)) {
      out.add(g.own(stored.replaceNulls(zero)));
    }
    if (s.kind() == AggSpec.Kind.SUM_DECIMAL) {
      try (Scalar none = Scalar.fromInt(0)) {
        out.add(g.own(count.binaryOp(BinaryOp.EQUAL, none, DType.BOOL8)));
      }
    } else {
      out.add(g.own(count.castTo(DType.INT64)));
    }
  }

  private static Scalar zero(DataType sumType, DType storage) {
    if (sumType instanceof DecimalType) {
      return Scalar.fromDecimal(BigInteger.ZERO, storage);
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
