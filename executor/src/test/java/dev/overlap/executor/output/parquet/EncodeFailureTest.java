package dev.overlap.executor.output.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.pipeline.OutOfDeviceMemoryException;
import org.junit.jupiter.api.Test;

/** How a failure of cuDF's Parquet writer reaches the task. */
class EncodeFailureTest {
  @Test
  void aFailedDeviceAllocationIsOneLineWithoutAFatalErrorAmongItsCauses() {
    OutOfMemoryError oom =
        new OutOfMemoryError(
            "Could not allocate native memory: std::bad_alloc: out_of_memory: RMM failure at:"
                + " arena.hpp:1: Maximum pool size exceeded (failed to allocate 2.00 GiB)");
    RuntimeException e = ParquetEncode.encodeFailure("kernel features", oom);
    assertTrue(e instanceof OutOfDeviceMemoryException, e.toString());
    assertTrue(
        e.getMessage()
            .startsWith(
                "out of device memory: kernel features's Parquet encode asked for 2.00 GiB"),
        e.getMessage());
    assertTrue(e.getMessage().contains("spark.overlap.batch.maxRows"), e.getMessage());
    // Spark's executor exits on a fatal error in a failed task's cause chain: none there.
    assertNull(e.getCause());
    assertSame(oom, e.getSuppressed()[0]);
  }

  @Test
  void otherFailuresAreThrownAsTheyAre() {
    IllegalStateException bug = new IllegalStateException("column size overflow");
    assertSame(bug, ParquetEncode.encodeFailure("kernel k", bug));
    StackOverflowError error = new StackOverflowError();
    assertEquals(
        error,
        assertThrows(
            StackOverflowError.class, () -> ParquetEncode.encodeFailure("kernel k", error)));
  }
}
