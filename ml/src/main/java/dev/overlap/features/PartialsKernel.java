package dev.overlap.features;

import ai.rapids.cudf.Table;
import dev.overlap.executor.api.CpuKernel;
import dev.overlap.executor.api.GpuKernel;
import java.util.List;
import org.apache.spark.sql.types.StructType;

/**
 * A kernel of the first pass ({@link FirstPassKernel}, {@link VocabCountKernel}): rows of one
 * schema whatever its input, partial results that the driver merges, with its CPU implementation
 * ({@link CpuFirstPass}) given beside it.
 */
abstract class PartialsKernel implements GpuKernel {
  private final StructType output;
  private final CpuKernel cpu;

  PartialsKernel(StructType output, CpuKernel cpu) {
    this.output = output;
    this.cpu = cpu;
  }

  @Override
  public final StructType outputSchema(StructType input) {
    return output;
  }

  @Override
  public final CpuKernel cpu() {
    return cpu;
  }

  /**
   * The batch's parts as one table: the only one itself, taken out of {@code parts}, else a new
   * table of them all; the caller closes what is left in {@code parts}.
   */
  static Table asOneTable(List<Table> parts) {
    return parts.size() == 1 ? parts.remove(0) : Table.concatenate(parts.toArray(new Table[0]));
  }
}
