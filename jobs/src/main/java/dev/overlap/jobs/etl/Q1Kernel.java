package dev.overlap.jobs.etl;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.GroupByAggregation;
import ai.rapids.cudf.NullPolicy;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.CpuKernel;
import dev.overlap.executor.api.GpuKernel;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * TPC-H Q1's per-batch work: the ship-date filter, the derived money columns, and partial sums and
 * counts per (return flag, line status). the driver adds the partials up ({@link
 * KernelQueries#q1}).
 *
 * <p>Input columns, in this order: l_quantity, l_extendedprice, l_discount, l_tax (each a decimal,
 * int, long, float or double, as {@link EtlShape} found them), l_returnflag, l_linestatus (string),
 * l_shipdate (date). A row whose ship date is null fails the filter, as in SQL.
 *
 * <p>Output, one row per group of a batch (or of a slice of one, see {@link GpuMoney#slices}): the
 * two keys; the sums of quantity, price, discounted price, charge and discount ({@link
 * MoneyType#partialType}, null where every value was null); the counts of non-null quantities,
 * prices and discounts (for the averages, which skip nulls); and the count of rows.
 */
public final class Q1Kernel implements GpuKernel {
  private static final long serialVersionUID = 1L;

  /** {@code date '1998-12-01' - interval '90' day}. */
  static final int CUTOFF_DAY = (int) LocalDate.of(1998, 9, 2).toEpochDay();

  /** The kernel's input: every column of {@link EtlShape#COLUMNS}, in order. */
  static final int[] INPUT = {0, 1, 2, 3, 4, 5, 6};

  private final EtlShape shape;

  Q1Kernel(EtlShape shape) {
    this.shape = shape;
  }

  /** The summed values, in output order. */
  private MoneyExpr[] sums() {
    return new MoneyExpr[] {
      shape.quantity, shape.price, shape.discPrice, shape.charge, shape.discount
    };
  }

  @Override
  public StructType outputSchema(StructType input) {
    MoneyExpr[] s = sums();
    return new StructType()
        .add("l_returnflag", DataTypes.StringType)
        .add("l_linestatus", DataTypes.StringType)
        .add("sum_qty", s[0].type.partialType())
        .add("sum_base_price", s[1].type.partialType())
        .add("sum_disc_price", s[2].type.partialType())
        .add("sum_charge", s[3].type.partialType())
        .add("sum_disc", s[4].type.partialType())
        .add("count_qty", DataTypes.LongType, false)
        .add("count_price", DataTypes.LongType, false)
        .add("count_disc", DataTypes.LongType, false)
        .add("count_order", DataTypes.LongType, false);
  }

  @Override
  public Table apply(Table in) {
    try (GpuMoney g = new GpuMoney(shape)) {
      Scalar cutoff = g.own(Scalar.timestampDaysFromInt(CUTOFF_DAY));
      ColumnVector keep =
          g.own(in.getColumn(EtlShape.SHIPDATE).binaryOp(BinaryOp.LESS_EQUAL, cutoff, DType.BOOL8));
      Table t = g.own(in.filter(keep));
      g.bind(t);
      MoneyExpr[] exprs = sums();
      GpuMoney.Val[] vals = new GpuMoney.Val[exprs.length];
      ColumnVector[] summands = new ColumnVector[exprs.length];
      for (int i = 0; i < exprs.length; i++) {
        vals[i] = g.eval(exprs[i]);
        summands[i] = g.summand(vals[i]);
      }
      ColumnVector slice = g.slices((int) t.getRowCount(), vals);
      Table groups =
          g.own(
              new Table(
                  t.getColumn(EtlShape.RETURNFLAG),
                  t.getColumn(EtlShape.LINESTATUS),
                  slice,
                  summands[0],
                  summands[1],
                  summands[2],
                  summands[3],
                  summands[4]));
      Table agg =
          g.own(
              groups
                  .groupBy(0, 1, 2)
                  .aggregate(
                      GroupByAggregation.sum().onColumn(3),
                      GroupByAggregation.sum().onColumn(4),
                      GroupByAggregation.sum().onColumn(5),
                      GroupByAggregation.sum().onColumn(6),
                      GroupByAggregation.sum().onColumn(7),
                      GroupByAggregation.count(NullPolicy.EXCLUDE).onColumn(3),
                      GroupByAggregation.count(NullPolicy.EXCLUDE).onColumn(4),
                      GroupByAggregation.count(NullPolicy.EXCLUDE).onColumn(7),
                      GroupByAggregation.count(NullPolicy.INCLUDE).onColumn(2)));
      // agg: the three keys, five sums, four counts (INT32).
      ColumnVector[] out = new ColumnVector[11];
      out[0] = agg.getColumn(0);
      out[1] = agg.getColumn(1);
      for (int i = 0; i < 5; i++) {
        out[2 + i] = g.partial(agg.getColumn(3 + i), exprs[i].type);
      }
      for (int i = 0; i < 4; i++) {
        out[7 + i] = g.own(agg.getColumn(8 + i).castTo(DType.INT64));
      }
      return new Table(out);
    }
  }

  /** The same partial sums on the CPU, one row per group of the partition. */
  @Override
  public CpuKernel cpu() {
    EtlShape s = shape;
    return rows -> {
      CpuMoney c = new CpuMoney(s);
      MoneyExpr[] exprs = new Q1Kernel(s).sums();
      Map<List<String>, Group> groups = new HashMap<>();
      while (rows.hasNext()) {
        Row r = rows.next();
        Object day = r.get(EtlShape.SHIPDATE);
        if (day == null || epochDay(day) > CUTOFF_DAY) {
          continue;
        }
        c.bind(r);
        List<String> key =
            java.util.Arrays.asList(
                r.getString(EtlShape.RETURNFLAG), r.getString(EtlShape.LINESTATUS));
        Group a = groups.computeIfAbsent(key, k -> new Group());
        for (int i = 0; i < exprs.length; i++) {
          a.sums[i].add(c.eval(exprs[i]));
        }
        a.counts[0] += r.isNullAt(EtlShape.QUANTITY) ? 0 : 1;
        a.counts[1] += r.isNullAt(EtlShape.PRICE) ? 0 : 1;
        a.counts[2] += r.isNullAt(EtlShape.DISCOUNT) ? 0 : 1;
        a.counts[3]++;
      }
      List<Row> out = new ArrayList<>();
      groups.forEach(
          (k, a) -> {
            Object[] v = new Object[11];
            v[0] = k.get(0);
            v[1] = k.get(1);
            for (int i = 0; i < exprs.length; i++) {
              v[2 + i] = a.sums[i].get(exprs[i].type);
            }
            for (int i = 0; i < 4; i++) {
              v[7 + i] = a.counts[i];
            }
            out.add(RowFactory.create(v));
          });
      return out.iterator();
    };
  }

  private static final class Group {
    final MoneySum[] sums = {
      new MoneySum(), new MoneySum(), new MoneySum(), new MoneySum(), new MoneySum()
    };
    final long[] counts = new long[4];
  }

  /** Days since the epoch of a date as Spark hands it to a {@code Row}. */
  static long epochDay(Object date) {
    return date instanceof LocalDate l
        ? l.toEpochDay()
        : ((java.sql.Date) date).toLocalDate().toEpochDay();
  }
}
