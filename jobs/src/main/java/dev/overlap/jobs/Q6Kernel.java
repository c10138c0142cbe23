package dev.overlap.jobs;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.CpuKernel;
import dev.overlap.executor.api.GpuKernel;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * TPC-H Q6's per-batch work: the filter and the partial sum of {@code l_extendedprice *
 * l_discount}. Input columns: l_quantity, l_extendedprice, l_discount (decimal(12,2)), l_shipdate.
 */
public final class Q6Kernel implements GpuKernel {
  static final String[] INPUT = {"l_quantity", "l_extendedprice", "l_discount", "l_shipdate"};
  static final int FROM_DAY = (int) LocalDate.of(1994, 1, 1).toEpochDay();
  static final int TO_DAY = (int) LocalDate.of(1995, 1, 1).toEpochDay();

  private static final DType MONEY4 = DType.create(DType.DTypeEnum.DECIMAL64, -4);

  @Override
  public StructType outputSchema(StructType input) {
    return new StructType()
        .add("revenue", DataTypes.createDecimalType(18, 4))
        .add("rows", DataTypes.LongType, false);
  }

  @Override
  public Table apply(Table in) {
    try (Scalar from = Scalar.timestampDaysFromInt(FROM_DAY);
        Scalar to = Scalar.timestampDaysFromInt(TO_DAY);
        Scalar lo = Scalar.fromDecimal(-2, 5L);
        Scalar hi = Scalar.fromDecimal(-2, 7L);
        Scalar qmax = Scalar.fromDecimal(-2, 2400L);
        ColumnVector a = in.getColumn(3).binaryOp(BinaryOp.GREATER_EQUAL, from, DType.BOOL8);
        ColumnVector b = in.getColumn(3).binaryOp(BinaryOp.LESS, to, DType.BOOL8);
        ColumnVector c = in.getColumn(2).binaryOp(BinaryOp.GREATER_EQUAL, lo, DType.BOOL8);
        ColumnVector d = in.getColumn(2).binaryOp(BinaryOp.LESS_EQUAL, hi, DType.BOOL8);
        ColumnVector e = in.getColumn(0).binaryOp(BinaryOp.LESS, qmax, DType.BOOL8);
        ColumnVector ab = a.binaryOp(BinaryOp.LOGICAL_AND, b, DType.BOOL8);
        ColumnVector cd = c.binaryOp(BinaryOp.LOGICAL_AND, d, DType.BOOL8);
        ColumnVector abcd = ab.binaryOp(BinaryOp.LOGICAL_AND, cd, DType.BOOL8);
        ColumnVector keep = abcd.binaryOp(BinaryOp.LOGICAL_AND, e, DType.BOOL8);
        Table t = in.filter(keep);
        ColumnVector rev = t.getColumn(1).binaryOp(BinaryOp.MUL, t.getColumn(2), MONEY4);
        Scalar sum = rev.sum(MONEY4);
        ColumnVector s = ColumnVector.fromScalar(sum, 1);
        ColumnVector n = ColumnVector.fromLongs(t.getRowCount())) {
      return new Table(s, n);
    }
  }

  @Override
  public CpuKernel cpu() {
    return rows -> {
      long sum = 0;
      long n = 0;
      while (rows.hasNext()) {
        Row r = rows.next();
        long day = Q1Kernel.epochDay(r.get(3));
        long qty = Q1Kernel.unscaled(r.getDecimal(0));
        long disc = Q1Kernel.unscaled(r.getDecimal(2));
        if (day >= FROM_DAY && day < TO_DAY && disc >= 5 && disc <= 7 && qty < 2400) {
          sum = Math.addExact(sum, Math.multiplyExact(Q1Kernel.unscaled(r.getDecimal(1)), disc));
          n++;
        }
      }
      return List.of(RowFactory.create(n == 0 ? null : BigDecimal.valueOf(sum, 4), n)).iterator();
    };
  }
}
