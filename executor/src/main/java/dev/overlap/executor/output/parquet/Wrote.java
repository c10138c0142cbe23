package dev.overlap.executor.output.parquet;

/**
 * What a write task did.
 *
 * @param rows the rows it wrote
 * @param gpu whether its output was encoded on the GPU
 */
public record Wrote(long rows, boolean gpu) {}
