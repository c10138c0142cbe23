package dev.overlap.executor.testing;

import ai.rapids.cudf.CudaException;
import ai.rapids.cudf.CudaFatalException;
import java.lang.reflect.Constructor;

/**
 * cuDF's CUDA exceptions as cuDF's native code throws them. Their constructors are package-private:
 * reached here by reflection, so tests without a GPU can fail a stage as a broken GPU would.
 */
public final class CudaErrors {
  /** cudaErrorIllegalAddress: sticky, the context is unusable afterwards. */
  public static final int ILLEGAL_ADDRESS = 700;

  /** cudaErrorMemoryAllocation: not sticky. */
  public static final int MEMORY_ALLOCATION = 2;

  private CudaErrors() {}

  public static CudaFatalException fatal(String message) {
    return make(CudaFatalException.class, message, ILLEGAL_ADDRESS);
  }

  public static CudaException nonFatal(String message) {
    return make(CudaException.class, message, MEMORY_ALLOCATION);
  }

  private static <E extends CudaException> E make(Class<E> type, String message, int code) {
    try {
      Constructor<E> c = type.getDeclaredConstructor(String.class, int.class);
      c.setAccessible(true);
      return c.newInstance(message, code);
    } catch (ReflectiveOperationException e) {
      throw new AssertionError("cannot make a " + type.getSimpleName(), e);
    }
  }
}
