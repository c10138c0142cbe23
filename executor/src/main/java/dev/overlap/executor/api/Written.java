package dev.overlap.executor.api;

/**
 * What {@link GpuPartitions#write} wrote, once the output is published.
 *
 * @param rows rows written
 * @param files Parquet files written (empty tasks write none)
 * @param bytes bytes of those files
 * @param gpuTasks tasks whose output the GPU encoded; the others ran the kernel's CPU
 *     implementation and Spark's Parquet writer
 */
@Public
public record Written(long rows, long files, long bytes, long gpuTasks) {}
