package dev.overlap.executor.api;

import java.io.Serializable;
import java.util.Iterator;
import org.apache.spark.sql.Row;

/**
 * The CPU implementation of a {@link GpuKernel}: the rows of one partition in, rows of the kernel's
 * output schema out. Runs on the task's thread. It should compute the same function as the GPU
 * kernel, so a job gives the same results with or without a GPU.
 */
@Public
@FunctionalInterface
public interface CpuKernel extends Serializable {
  Iterator<Row> apply(Iterator<Row> rows);
}
