package dev.overlap.executor.bench;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.CpuKernel;
import dev.overlap.executor.api.GpuKernel;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * A kernel of tunable cost over a bigint column {@code x}: {@code passes} times {@code x = x * 3 +
 * 1} (each pass reads and writes the column twice in device memory), then the batch's partial
 * aggregate: the sum of the result and the row count. Zero passes is copy-bound.
 */
public final class PassesKernel implements GpuKernel {
  private static final long serialVersionUID = 1L;

  private final int passes;
  private final int column;

  public PassesKernel(int passes, int column) {
    this.passes = passes;
    this.column = column;
  }

  @Override
  public StructType outputSchema(StructType input) {
    return new StructType().add("sum", DataTypes.LongType).add("n", DataTypes.LongType, false);
  }

  @Override
  public Table apply(Table input) {
    try (Scalar three = Scalar.fromLong(3);
        Scalar one = Scalar.fromLong(1)) {
      return apply(input.getColumn(column), passes, three, one, null);
    }
  }

  /**
   * The kernel over {@code x} with the constants given as device scalars; the row count comes from
   * {@code count} when given, else from the host.
   */
  static Table apply(ColumnVector x, int passes, Scalar three, Scalar one, Scalar count) {
    ColumnVector cur = null;
    try {
      for (int p = 0; p < passes; p++) {
        ColumnVector src = cur == null ? x : cur;
        try (ColumnVector t = src.binaryOp(BinaryOp.MUL, three, DType.INT64)) {
          ColumnVector next = t.binaryOp(BinaryOp.ADD, one, DType.INT64);
          if (cur != null) {
            cur.close();
          }
          cur = next;
        }
      }
      ColumnVector result = cur == null ? x : cur;
      try (Scalar sum = result.sum(DType.INT64);
          ColumnVector s = ColumnVector.fromScalar(sum, 1);
          ColumnVector n =
              count == null
                  ? ColumnVector.fromLongs(result.getRowCount())
                  : ColumnVector.fromScalar(count, 1)) {
        return new Table(s, n);
      }
    } finally {
      if (cur != null) {
        cur.close();
      }
    }
  }

  /** The same arithmetic in Java, with the same 64-bit wrap-around. */
  @Override
  public CpuKernel cpu() {
    int p = passes;
    int c = column;
    return rows -> {
      long sum = 0;
      long n = 0;
      boolean any = false;
      while (rows.hasNext()) {
        Row r = rows.next();
        n++;
        if (r.isNullAt(c)) {
          continue;
        }
        long v = r.getLong(c);
        for (int i = 0; i < p; i++) {
          v = v * 3 + 1;
        }
        sum += v;
        any = true;
      }
      return List.of(RowFactory.create(any ? sum : null, n)).iterator();
    };
  }
}
