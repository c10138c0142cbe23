package dev.overlap.features;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.ColumnView;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.GroupByAggregation;
import ai.rapids.cudf.GroupByOptions;
import ai.rapids.cudf.OrderByArg;
import ai.rapids.cudf.ReductionAggregation;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The features job's first pass as partial aggregates, one set per batch, in one long table that
 * {@link FirstPass} merges on the driver (see {@link #PARTIALS} for its rows):
 *
 * <ul>
 *   <li>numeric column: the present values' count, mean, sum of squared deviations (M2), minimum
 *       and maximum, as doubles, and how many values were NaN or infinite (left out, as nulls);
 *   <li>date or timestamp: the present values' count and the exact sum of their days or
 *       microseconds since the epoch, as a high part ({@code value >> 32}) and a low part ({@code
 *       value & 0xFFFFFFFF}) summed separately, so that no sum overflows;
 *   <li>string: the batch's {@code top} most frequent present values with their counts (ties by
 *       value), and one row whose value is null and whose count is the {@code top}-th largest count
 *       when the batch has more distinct values than that (0 otherwise): no value left out of the
 *       list occurs more often in the batch;
 *   <li>every column: its null values, counted on its first row ({@code nulls}); and one row whose
 *       {@code col} is -1 and whose {@code n} is the batch's row count.
 * </ul>
 */
final class FirstPassKernel extends PartialsKernel {
  /** The partial aggregates' rows; a row fills the columns of its kind and leaves others null. */
  static final StructType PARTIALS =
      new StructType()
          .add("col", DataTypes.IntegerType, false)
          .add("value", DataTypes.StringType, true)
          .add("n", DataTypes.LongType, false)
          .add("mean", DataTypes.DoubleType, true)
          .add("m2", DataTypes.DoubleType, true)
          .add("min", DataTypes.DoubleType, true)
          .add("max", DataTypes.DoubleType, true)
          .add("nonfinite", DataTypes.LongType, true)
          .add("hi", DataTypes.LongType, true)
          .add("lo", DataTypes.LongType, true)
          .add("nulls", DataTypes.LongType, true);

  private final FeaturePlan plan;
  private final int top;

  FirstPassKernel(FeaturePlan plan, int top) {
    super(PARTIALS, rows -> CpuFirstPass.partials(plan, top, rows));
    this.plan = plan;
    this.top = top;
  }

  @Override
  public Table apply(Table in) {
    HostRows rows = new HostRows();
    List<Table> parts = new ArrayList<>();
    try {
      rows.add(-1, null, in.getRowCount(), null, null, null, null, null, null, null);
      for (int i = 0; i < plan.columns.size(); i++) {
        FeaturePlan.Column c = plan.columns.get(i);
        ColumnVector x = in.getColumn(i);
        switch (c.kind) {
          case NUMERIC:
            numeric(i, c, x, rows);
            break;
          case DATE:
          case TIMESTAMP:
          case TIMESTAMP_NTZ:
            epochSums(i, x, rows);
            break;
          case STRING:
            parts.add(topValues(i, x, rows));
            break;
          default:
            throw new AssertionError(c.kind);
        }
      }
      parts.add(rows.table());
      return asOneTable(parts);
    } finally {
      parts.forEach(Table::close);
    }
  }

  private static void numeric(int i, FeaturePlan.Column c, ColumnVector x, HostRows rows) {
    try (ColumnVector finite = c.floating ? FeatureKernel.finiteOrNull(x) : null;
        ColumnVector d = (finite != null ? finite : x).castTo(DType.FLOAT64)) {
      long nonFinite = c.floating ? d.getNullCount() - x.getNullCount() : 0;
      long n = d.getRowCount() - d.getNullCount();
      if (n == 0) {
        rows.add(i, null, 0, null, null, null, null, nonFinite, null, null);
        rows.nulls(x.getNullCount());
        return;
      }
      try (Scalar mean = d.reduce(ReductionAggregation.mean(), DType.FLOAT64);
          Scalar var = d.reduce(ReductionAggregation.variance(0), DType.FLOAT64);
          Scalar min = d.min();
          Scalar max = d.max()) {
        rows.add(
            i,
            null,
            n,
            mean.getDouble(),
            var.getDouble() * n,
            min.getDouble(),
            max.getDouble(),
            nonFinite,
            null,
            null);
        rows.nulls(x.getNullCount());
      }
    }
  }

  private static void epochSums(int i, ColumnVector x, HostRows rows) {
    long n = x.getRowCount() - x.getNullCount();
    if (n == 0) {
      rows.add(i, null, 0, null, null, null, null, null, 0L, 0L);
      rows.nulls(x.getNullCount());
      return;
    }
    // The days or microseconds as stored (a bit cast: no conversion), then widened to INT64.
    DType storage = x.getType().equals(DType.TIMESTAMP_DAYS) ? DType.INT32 : DType.INT64;
    try (ColumnView raw = x.bitCastTo(storage);
        ColumnVector v = raw.castTo(DType.INT64);
        Scalar shift = Scalar.fromInt(32);
        Scalar mask = Scalar.fromLong(0xFFFFFFFFL);
        ColumnVector high = v.binaryOp(BinaryOp.SHIFT_RIGHT, shift, DType.INT64);
        ColumnVector low = v.binaryOp(BinaryOp.BITWISE_AND, mask, DType.INT64);
        Scalar hi = high.reduce(ReductionAggregation.sum(), DType.INT64);
        Scalar lo = low.reduce(ReductionAggregation.sum(), DType.INT64)) {
      rows.add(i, null, n, null, null, null, null, null, hi.getLong(), lo.getLong());
      rows.nulls(x.getNullCount());
    }
  }

  /** The batch's most frequent values of column {@code i}, as rows of {@link #PARTIALS}. */
  private Table topValues(int i, ColumnVector x, HostRows rows) {
    GroupByOptions opts = GroupByOptions.builder().withIgnoreNullKeys(true).build();
    try (Table one = new Table(x);
        Table counted = one.groupBy(opts, 0).aggregate(GroupByAggregation.count().onColumn(0));
        Table sorted = counted.orderBy(OrderByArg.desc(1), OrderByArg.asc(0))) {
      int distinct = (int) sorted.getRowCount();
      int kept = Math.min(top, distinct);
      long bound = 0;
      if (distinct > top) {
        try (Scalar s = sorted.getColumn(1).getScalarElement(top - 1)) {
          bound = s.getInt();
        }
      }
      rows.add(i, null, bound, null, null, null, null, null, null, null);
      rows.nulls(x.getNullCount());
      try (ColumnVector values = sorted.getColumn(0).subVector(0, kept);
          ColumnVector counts32 = sorted.getColumn(1).subVector(0, kept);
          ColumnVector counts = counts32.castTo(DType.INT64);
          Scalar col = Scalar.fromInt(i);
          ColumnVector cols = ColumnVector.fromScalar(col, kept);
          Scalar noDouble = Scalar.fromNull(DType.FLOAT64);
          ColumnVector nd = ColumnVector.fromScalar(noDouble, kept);
          Scalar noLong = Scalar.fromNull(DType.INT64);
          ColumnVector nl = ColumnVector.fromScalar(noLong, kept)) {
        return new Table(cols, values, counts, nd, nd, nd, nd, nl, nl, nl, nl);
      }
    }
  }

  /** Rows of {@link #PARTIALS} gathered on the host, then made one table. */
  private static final class HostRows {
    final List<Integer> col = new ArrayList<>();
    final List<String> value = new ArrayList<>();
    final List<Long> n = new ArrayList<>();
    final List<Double> mean = new ArrayList<>();
    final List<Double> m2 = new ArrayList<>();
    final List<Double> min = new ArrayList<>();
    final List<Double> max = new ArrayList<>();
    final List<Long> nonFinite = new ArrayList<>();
    final List<Long> hi = new ArrayList<>();
    final List<Long> lo = new ArrayList<>();
    final List<Long> nulls = new ArrayList<>();

    void add(
        int c,
        String v,
        long count,
        Double mu,
        Double squares,
        Double lowest,
        Double highest,
        Long bad,
        Long high,
        Long low) {
      col.add(c);
      value.add(v);
      n.add(count);
      mean.add(mu);
      m2.add(squares);
      min.add(lowest);
      max.add(highest);
      nonFinite.add(bad);
      hi.add(high);
      lo.add(low);
      nulls.add(null);
    }

    /** The null count of the column of the row added last. */
    void nulls(long count) {
      nulls.set(nulls.size() - 1, count);
    }

    Table table() {
      try (ColumnVector c = ColumnVector.fromBoxedInts(col.toArray(new Integer[0]));
          ColumnVector v = ColumnVector.fromStrings(value.toArray(new String[0]));
          ColumnVector cn = ColumnVector.fromBoxedLongs(n.toArray(new Long[0]));
          ColumnVector mu = ColumnVector.fromBoxedDoubles(mean.toArray(new Double[0]));
          ColumnVector sq = ColumnVector.fromBoxedDoubles(m2.toArray(new Double[0]));
          ColumnVector lowest = ColumnVector.fromBoxedDoubles(min.toArray(new Double[0]));
          ColumnVector highest = ColumnVector.fromBoxedDoubles(max.toArray(new Double[0]));
          ColumnVector bad = ColumnVector.fromBoxedLongs(nonFinite.toArray(new Long[0]));
          ColumnVector high = ColumnVector.fromBoxedLongs(hi.toArray(new Long[0]));
          ColumnVector low = ColumnVector.fromBoxedLongs(lo.toArray(new Long[0]));
          ColumnVector none = ColumnVector.fromBoxedLongs(nulls.toArray(new Long[0]))) {
        return new Table(c, v, cn, mu, sq, lowest, highest, bad, high, low, none);
      }
    }
  }
}
