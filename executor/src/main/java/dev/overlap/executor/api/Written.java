package dev.overlap.executor.api;

/**
 * What {@link GpuPartitions#write} wrote, once the output is published.
 *
 * @param rows rows written
 * @param files Parquet files written: empty tasks write none, but for the first task, which writes
 *     one file of no rows with the schema when it has no rows (as Spark's own writer does)
 * @param bytes bytes of those files
 * @param gpuTasks tasks that ran the kernel on the GPU and encoded its output there; the others ran
 *     the kernel's CPU implementation and Spark's Parquet writer. The first task's file of no rows,
 *     when it has one, comes from Spark's writer either way
 */
@Public
public record Written(long rows, long files, long bytes, long gpuTasks) {}
