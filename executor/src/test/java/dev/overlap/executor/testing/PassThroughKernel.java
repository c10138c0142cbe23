package dev.overlap.executor.testing;

import ai.rapids.cudf.Table;
import dev.overlap.executor.api.CpuKernel;
import dev.overlap.executor.api.GpuKernel;
import org.apache.spark.sql.types.StructType;

/** Passes its input through, on the GPU and in its CPU implementation. */
public final class PassThroughKernel implements GpuKernel {
  private static final long serialVersionUID = 1L;

  @Override
  public StructType outputSchema(StructType input) {
    return input;
  }

  @Override
  public Table apply(Table input) {
    return input;
  }

  @Override
  public CpuKernel cpu() {
    return rows -> rows;
  }
}
