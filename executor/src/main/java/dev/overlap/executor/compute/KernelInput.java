package dev.overlap.executor.compute;

import ai.rapids.cudf.Table;
import java.util.List;

/**
 * How an input path's batch on the device becomes the kernel's input table, on the compute thread:
 * the packed batch's own table, the Parquet chunks decoded, the RAPIDS table itself.
 *
 * @param <D> the input path's batch on the device
 */
public interface KernelInput<D extends AutoCloseable> {
  /**
   * The kernel's input table and what holds its memory: closing {@code keep} (which may be the
   * table itself) releases everything the table reads.
   */
  record Kept(Table table, AutoCloseable keep) {}

  /**
   * The kernel's input for {@code batch}, once the batch's copies are done. The batch stays the
   * pipeline's; the returned value is the caller's. On failure nothing made here is left open.
   */
  Kept table(D batch);

  /**
   * What making the table does, for an out-of-memory line ("Parquet decode"); null when it
   * allocates nothing of its own.
   */
  default String step() {
    return null;
  }

  /** As {@code BatchStages.splitDevice}. Default: empty. */
  default List<D> split(D batch) {
    return List.of();
  }
}
