package dev.overlap.executor.bench;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.GpuKernel;
import org.apache.spark.sql.types.StructType;

/**
 * {@link PassesKernel}'s computation with no host-to-device copy inside {@link #apply}: the
 * constants and the row count are device scalars made once, up front. For a benchmark whose chunks
 * all have {@code rows} rows; it tells whether the kernel's own small copies wait behind the
 * pipeline's large ones on the copy engine.
 */
final class DeviceOnlyPassesKernel implements GpuKernel, AutoCloseable {
  private final int passes;
  private final transient Scalar three;
  private final transient Scalar one;
  private final transient Scalar count;

  DeviceOnlyPassesKernel(int passes, long rows) {
    this.passes = passes;
    Scalar a = Scalar.fromLong(3);
    Scalar b = null;
    try {
      b = Scalar.fromLong(1);
      this.count = Scalar.fromLong(rows);
    } catch (RuntimeException e) {
      a.close();
      if (b != null) {
        b.close();
      }
      throw e;
    }
    this.three = a;
    this.one = b;
    // Made on this thread's stream, used on the compute thread's: finish them first.
    Cuda.DEFAULT_STREAM.sync();
  }

  @Override
  public StructType outputSchema(StructType input) {
    return new PassesKernel(passes, 0).outputSchema(input);
  }

  @Override
  public Table apply(Table input) {
    ColumnVector x = input.getColumn(0);
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
          ColumnVector n = ColumnVector.fromScalar(count, 1)) {
        return new Table(s, n);
      }
    } finally {
      if (cur != null) {
        cur.close();
      }
    }
  }

  @Override
  public void close() {
    try (Scalar a = three;
        Scalar b = one;
        Scalar c = count) {
      // closes all three
    }
  }
}
