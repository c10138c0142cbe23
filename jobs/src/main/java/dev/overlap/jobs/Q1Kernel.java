package dev.overlap.jobs;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.GroupByAggregation;
import ai.rapids.cudf.NullPolicy;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.CpuKernel;
import dev.overlap.executor.api.GpuKernel;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * TPC-H Q1's per-batch work: the ship-date filter, the derived money columns, and partial sums and
 * counts per (return flag, line status). Spark adds the partials up ({@link EtlJob#q1}).
 *
 * <p>Input columns, in this order: l_quantity, l_extendedprice, l_discount, l_tax (decimal(12,2)),
 * l_returnflag, l_linestatus (string), l_shipdate (date).
 */
public final class Q1Kernel implements GpuKernel {
  /** {@code date '1998-12-01' - interval '90' day}. */
  static final int CUTOFF_DAY = (int) LocalDate.of(1998, 9, 2).toEpochDay();

  static final String[] INPUT = {
    "l_quantity",
    "l_extendedprice",
    "l_discount",
    "l_tax",
    "l_returnflag",
    "l_linestatus",
    "l_shipdate"
  };

  private static final DType MONEY2 = DType.create(DType.DTypeEnum.DECIMAL64, -2);
  private static final DType MONEY4 = DType.create(DType.DTypeEnum.DECIMAL64, -4);
  private static final DType MONEY6 = DType.create(DType.DTypeEnum.DECIMAL64, -6);

  @Override
  public StructType outputSchema(StructType input) {
    return new StructType()
        .add("l_returnflag", DataTypes.StringType)
        .add("l_linestatus", DataTypes.StringType)
        .add("sum_qty", DataTypes.createDecimalType(18, 2))
        .add("sum_base_price", DataTypes.createDecimalType(18, 2))
        .add("sum_disc_price", DataTypes.createDecimalType(18, 4))
        .add("sum_charge", DataTypes.createDecimalType(18, 6))
        .add("sum_disc", DataTypes.createDecimalType(18, 2))
        .add("count_order", DataTypes.IntegerType, false);
  }

  @Override
  public Table apply(Table in) {
    try (Scalar cutoff = Scalar.timestampDaysFromInt(CUTOFF_DAY);
        Scalar one = Scalar.fromDecimal(-2, 100L);
        ColumnVector keep = in.getColumn(6).binaryOp(BinaryOp.LESS_EQUAL, cutoff, DType.BOOL8);
        Table t = in.filter(keep);
        ColumnVector oneMinusDisc = one.binaryOp(BinaryOp.SUB, t.getColumn(2), MONEY2);
        ColumnVector onePlusTax = one.binaryOp(BinaryOp.ADD, t.getColumn(3), MONEY2);
        ColumnVector discPrice = t.getColumn(1).binaryOp(BinaryOp.MUL, oneMinusDisc, MONEY4);
        ColumnVector charge = discPrice.binaryOp(BinaryOp.MUL, onePlusTax, MONEY6);
        Table g =
            new Table(
                t.getColumn(4),
                t.getColumn(5),
                t.getColumn(0),
                t.getColumn(1),
                discPrice,
                charge,
                t.getColumn(2))) {
      return g.groupBy(0, 1)
          .aggregate(
              GroupByAggregation.sum().onColumn(2),
              GroupByAggregation.sum().onColumn(3),
              GroupByAggregation.sum().onColumn(4),
              GroupByAggregation.sum().onColumn(5),
              GroupByAggregation.sum().onColumn(6),
              GroupByAggregation.count(NullPolicy.INCLUDE).onColumn(2));
    }
  }

  /** The same partial sums in Java, on unscaled longs. */
  @Override
  public CpuKernel cpu() {
    return rows -> {
      Map<String, long[]> acc = new TreeMap<>();
      while (rows.hasNext()) {
        Row r = rows.next();
        if (epochDay(r.get(6)) > CUTOFF_DAY) {
          continue;
        }
        long qty = unscaled(r.getDecimal(0));
        long price = unscaled(r.getDecimal(1));
        long disc = unscaled(r.getDecimal(2));
        long tax = unscaled(r.getDecimal(3));
        long discPrice = Math.multiplyExact(price, 100 - disc); // scale 4
        long charge = Math.multiplyExact(discPrice, 100 + tax); // scale 6
        long[] a =
            acc.computeIfAbsent(r.getString(4) + "\u0000" + r.getString(5), k -> new long[6]);
        a[0] = Math.addExact(a[0], qty);
        a[1] = Math.addExact(a[1], price);
        a[2] = Math.addExact(a[2], discPrice);
        a[3] = Math.addExact(a[3], charge);
        a[4] = Math.addExact(a[4], disc);
        a[5]++;
      }
      List<Row> out = new ArrayList<>();
      acc.forEach(
          (k, a) -> {
            String[] key = k.split("\u0000", -1);
            out.add(
                RowFactory.create(
                    key[0],
                    key[1],
                    BigDecimal.valueOf(a[0], 2),
                    BigDecimal.valueOf(a[1], 2),
                    BigDecimal.valueOf(a[2], 4),
                    BigDecimal.valueOf(a[3], 6),
                    BigDecimal.valueOf(a[4], 2),
                    (int) a[5]));
          });
      return out.iterator();
    };
  }

  /** Days since the epoch of a date as Spark hands it to a {@code Row}. */
  static long epochDay(Object date) {
    return date instanceof LocalDate l
        ? l.toEpochDay()
        : ((java.sql.Date) date).toLocalDate().toEpochDay();
  }

  static long unscaled(BigDecimal d) {
    return d.setScale(2).unscaledValue().longValueExact();
  }
}
