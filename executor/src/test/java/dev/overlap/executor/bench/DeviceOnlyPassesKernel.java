package dev.overlap.executor.bench;

import ai.rapids.cudf.Cuda;
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
  private static final long serialVersionUID = 1L;

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
    return PassesKernel.apply(input.getColumn(0), passes, three, one, count);
  }

  @Override
  @SuppressWarnings("try") // the resources are only there to be closed
  public void close() {
    try (Scalar a = three;
        Scalar b = one;
        Scalar c = count) {
      // closes all three
    }
  }
}
