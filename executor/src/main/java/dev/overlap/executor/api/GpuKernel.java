package dev.overlap.executor.api;

import ai.rapids.cudf.Table;
import java.io.Serializable;
import org.apache.spark.sql.types.StructType;

/**
 * A computation on one batch of rows resident on the GPU: a cuDF {@link Table} in, a {@link Table}
 * out. {@link GpuPartitions#map} applies it to every batch of every partition.
 *
 * <p><b>Where it runs.</b> {@link #apply} runs on one of the executor's compute threads ({@code
 * spark.overlap.pipeline.computeThreads}), not on the task's thread: there is no {@code
 * TaskContext} there, and cuDF calls run on that thread's per-thread default stream while the next
 * batch is being copied in on the copy stream. All of a task's batches go through the same compute
 * thread, in order; other tasks' kernels may run at the same time on the other threads, so a kernel
 * must not keep state shared between calls unless it is thread-safe. Keep it to GPU work: blocking
 * I/O in a kernel stalls every task that thread serves.
 *
 * <p><b>Memory.</b> The input table belongs to the pipeline, which closes it after {@code apply}
 * returns: do not close it and do not keep it. Close every intermediate column you create
 * (try-with-resources). The returned table is handed to the pipeline, which copies it back and
 * closes it. Returning the input itself is allowed (the pipeline then takes its own reference).
 *
 * <p><b>Batches.</b> A partition may be split into several batches (see {@code
 * spark.overlap.batch.maxRows} and {@code spark.overlap.staging.bufferSize}); the kernel sees each
 * independently. Per-partition aggregates are therefore per-batch partial aggregates: finish them
 * in Spark.
 *
 * <p><b>Column layouts.</b> Each Spark type is one cuDF column: {@code boolean} BOOL8, {@code
 * tinyint} to {@code bigint} INT8 to INT64, {@code float} FLOAT32, {@code double} FLOAT64, {@code
 * date} TIMESTAMP_DAYS, {@code timestamp} and {@code timestamp_ntz} TIMESTAMP_MICROSECONDS, {@code
 * string} STRING, {@code decimal(p, s)} DECIMAL32, 64 or 128 by precision with cuDF scale {@code
 * -s}. Nested types, as the RAPIDS Accelerator lays them out: {@code binary} a LIST of UINT8,
 * {@code array<T>} a LIST whose child is {@code T}'s column, {@code struct<...>} a STRUCT with one
 * child per field in order, {@code map<K, V>} a LIST of STRUCT{@code <key, value>}. Nulls at every
 * level: a null list, an empty list and a list holding a null are three different rows. A nested
 * output is checked level by level against the declared type.
 *
 * <p>Instances are serialized to executors.
 */
@Public
public interface GpuKernel extends Serializable {

  /**
   * The schema of the rows {@link #apply} returns for input of {@code input}'s schema. Column types
   * must match what the GPU produces (for example INT64 for {@code bigint}, DECIMAL64 with scale -2
   * for {@code decimal(12,2)}); a mismatch fails the task naming the column.
   */
  StructType outputSchema(StructType input);

  /** Runs on a GPU compute thread; see the class comment for what that means. */
  Table apply(Table input);

  /**
   * The same computation on the CPU, used on executors where no GPU is usable, or null when there
   * is none (the job then fails there, saying why).
   */
  default CpuKernel cpu() {
    return null;
  }

  /** A name for logs and errors. */
  default String name() {
    return getClass().getSimpleName().isEmpty() ? getClass().getName() : getClass().getSimpleName();
  }
}
