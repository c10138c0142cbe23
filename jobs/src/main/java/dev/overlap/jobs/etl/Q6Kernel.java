package dev.overlap.jobs.etl;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.GroupByAggregation;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.CpuKernel;
import dev.overlap.executor.api.GpuKernel;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.StructType;

/**
 * TPC-H Q6's per-batch work: the filter and the partial sum of {@code l_extendedprice *
 * l_discount}. Input columns: l_quantity, l_extendedprice, l_discount (each a decimal, int, long,
 * float or double, as {@link EtlShape} found them), l_shipdate (date). Output: the revenue in
 * {@link MoneyType#partialType}, one row per batch or slice of one that has a row passing the
 * filter (none otherwise); the driver adds them up ({@link KernelQueries#q6}).
 */
public final class Q6Kernel implements GpuKernel {
  private static final long serialVersionUID = 1L;

  /** The kernel's input, as positions in {@link EtlShape#COLUMNS}. */
  static final int[] INPUT = {
    EtlShape.QUANTITY, EtlShape.PRICE, EtlShape.DISCOUNT, EtlShape.SHIPDATE
  };

  private static final int SHIPDATE = 3;
  static final int FROM_DAY = (int) LocalDate.of(1994, 1, 1).toEpochDay();
  static final int TO_DAY = (int) LocalDate.of(1995, 1, 1).toEpochDay();

  /** {@code l_discount between 0.06 - 0.01 and 0.06 + 0.01 and l_quantity < 24}. */
  static final BigDecimal DISC_LO = new BigDecimal("0.05");

  static final BigDecimal DISC_HI = new BigDecimal("0.07");
  static final BigDecimal QTY_BELOW = new BigDecimal(24);

  private final EtlShape shape;

  Q6Kernel(EtlShape shape) {
    this.shape = shape;
  }

  @Override
  public StructType outputSchema(StructType input) {
    return new StructType().add("revenue", shape.revenue.type.partialType());
  }

  @Override
  public Table apply(Table in) {
    try (GpuMoney g = new GpuMoney(shape)) {
      Scalar from = g.own(Scalar.timestampDaysFromInt(FROM_DAY));
      Scalar to = g.own(Scalar.timestampDaysFromInt(TO_DAY));
      ColumnVector day = in.getColumn(SHIPDATE);
      ColumnVector keep =
          g.and(
              g.own(day.binaryOp(BinaryOp.GREATER_EQUAL, from, DType.BOOL8)),
              g.own(day.binaryOp(BinaryOp.LESS, to, DType.BOOL8)),
              g.between(
                  in.getColumn(EtlShape.DISCOUNT), shape.discount.type, DISC_LO, DISC_HI, false),
              g.between(
                  in.getColumn(EtlShape.QUANTITY), shape.quantity.type, null, QTY_BELOW, true));
      Table t = g.own(in.filter(keep));
      g.bind(t);
      GpuMoney.Val rev = g.eval(shape.revenue);
      ColumnVector slice = g.slices((int) t.getRowCount(), rev);
      Table groups = g.own(new Table(slice, g.summand(rev)));
      Table agg = g.own(groups.groupBy(0).aggregate(GroupByAggregation.sum().onColumn(1)));
      return new Table(g.partial(agg.getColumn(1), shape.revenue.type));
    }
  }

  @Override
  public CpuKernel cpu() {
    EtlShape s = shape;
    return rows -> {
      CpuMoney c = new CpuMoney(s);
      MoneySum sum = new MoneySum();
      boolean any = false;
      while (rows.hasNext()) {
        Row r = rows.next();
        Object date = r.get(SHIPDATE);
        if (date == null) {
          continue;
        }
        long day = Q1Kernel.epochDay(date);
        if (day < FROM_DAY || day >= TO_DAY) {
          continue;
        }
        c.bind(r);
        if (CpuMoney.between(c.eval(s.discount), DISC_LO, DISC_HI, false)
            && CpuMoney.between(c.eval(s.quantity), null, QTY_BELOW, true)) {
          sum.add(c.eval(s.revenue));
          any = true;
        }
      }
      List<Row> out = new ArrayList<>();
      if (any) {
        out.add(RowFactory.create(sum.get(s.revenue.type)));
      }
      return out.iterator();
    };
  }
}
