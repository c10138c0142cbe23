package dev.overlap.executor.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.CudaFatalException;
import ai.rapids.cudf.CudfException;
import java.lang.reflect.Constructor;
import org.junit.jupiter.api.Test;

/** Failed device allocations told apart from other failures, as cuDF reports them: no GPU. */
class DeviceMemoryTest {
  /** What cuDF's JNI layer throws when RMM's pool is full. */
  static final OutOfMemoryError RMM_POOL_FULL =
      new OutOfMemoryError(
          "Could not allocate native memory: std::bad_alloc: out_of_memory: RMM failure at:"
              + " /rmm/mr/pool_memory_resource.hpp:260: Maximum pool size exceeded (failed to"
              + " allocate 1.00 GiB): No room in arena.");

  private static <T extends Throwable> T make(Class<T> type, Object... args) throws Exception {
    Class<?>[] types = new Class<?>[args.length];
    for (int i = 0; i < args.length; i++) {
      types[i] = args[i] instanceof Integer ? int.class : args[i].getClass();
    }
    Constructor<T> c = type.getDeclaredConstructor(types);
    c.setAccessible(true); // cuDF makes its exceptions in native code only
    return c.newInstance(args);
  }

  @Test
  void rmmOutOfMemoryIsAFailedAllocationWithTheBytesItAskedFor() {
    assertTrue(DeviceMemory.isOutOfMemory(RMM_POOL_FULL));
    assertEquals("1.00 GiB", DeviceMemory.asked(RMM_POOL_FULL));
    assertEquals(
        "kernel q1 asked for 1.00 GiB", DeviceMemory.describe("kernel q1", -1, RMM_POOL_FULL));
    assertEquals(
        "kernel q1's upload asked for 4096 bytes",
        DeviceMemory.describe("kernel q1's upload", 4096, RMM_POOL_FULL));
    IllegalStateException wrapped = new IllegalStateException("kernel failed", RMM_POOL_FULL);
    assertTrue(DeviceMemory.isOutOfMemory(wrapped), "found among the causes");
  }

  @Test
  void aKernelsTemporaryAllocationReportedAsCudfExceptionIsOne() throws Exception {
    CudfException e =
        make(CudfException.class, "std::bad_alloc: cudaErrorMemoryAllocation: out of memory");
    assertTrue(DeviceMemory.isOutOfMemory(e));
    assertNull(DeviceMemory.asked(e));
    assertEquals(
        "kernel q1 asked for an allocation of unknown size (std::bad_alloc: cudaErrorMemoryAllocation:"
            + " out of memory)",
        DeviceMemory.describe("kernel q1", -1, e));
  }

  @Test
  void otherFailuresAreNot() throws Exception {
    assertFalse(DeviceMemory.isOutOfMemory(new OutOfMemoryError("Java heap space")));
    assertFalse(DeviceMemory.isOutOfMemory(new IllegalArgumentException("bad row")));
    assertFalse(DeviceMemory.isOutOfMemory(make(CudfException.class, "column size overflow")));
    CudaFatalException fatal =
        make(CudaFatalException.class, "cudaErrorIllegalAddress after bad_alloc", 700);
    assertFalse(DeviceMemory.isOutOfMemory(fatal), "a broken device is not a full one");
    assertNull(DeviceMemory.describe("kernel q1", -1, new IllegalStateException("x")));
  }
}
