package dev.overlap.executor.testing;

import ai.rapids.cudf.Table;
import dev.overlap.executor.api.GpuKernel;
import org.apache.spark.sql.types.StructType;

/** A GPU-only kernel: passes its input through and has no CPU implementation. */
public final class NoCpuKernel implements GpuKernel {
  private static final long serialVersionUID = 1L;

  @Override
  public StructType outputSchema(StructType input) {
    return input;
  }

  @Override
  public Table apply(Table input) {
    return input;
  }
}
