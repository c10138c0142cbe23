package dev.overlap.executor.input.rapids;

import java.lang.reflect.InvocationTargetException;
import org.apache.spark.TaskContext;

/**
 * RAPIDS' GPU admission ({@code GpuSemaphore}) for a task that works with RAPIDS' device batches,
 * found at run time: this project compiles and runs without the RAPIDS jar.
 */
public final class RapidsAdmission {
  private static final String SEMAPHORE = "com.nvidia.spark.rapids.GpuSemaphore$";
  private static final String SHIM_LOADER = "com.nvidia.spark.rapids.ShimLoader";

  private RapidsAdmission() {}

  /** Takes RAPIDS' GPU admission for the running task (released at the task's end). */
  public static void admit() {
    TaskContext ctx = TaskContext.get();
    if (ctx == null) {
      return;
    }
    try {
      Class<?> shims = Class.forName(SHIM_LOADER, true, RapidsAdmission.class.getClassLoader());
      ClassLoader shimLoader = (ClassLoader) shims.getMethod("getShimClassLoader").invoke(null);
      Class<?> sem = Class.forName(SEMAPHORE, true, shimLoader);
      Object module = sem.getField("MODULE$").get(null);
      sem.getMethod("acquireIfNecessary", TaskContext.class).invoke(module, ctx);
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      throw cause instanceof RuntimeException r
          ? r
          : new IllegalStateException("RAPIDS' GpuSemaphore failed: " + cause, cause);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(
          "RAPIDS' GpuSemaphore is not what this version expects: " + e, e);
    }
  }
}
