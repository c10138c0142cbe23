package dev.overlap.executor.input.rapids;

import ai.rapids.cudf.Table;
import java.lang.reflect.InvocationTargetException;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * The RAPIDS Accelerator's device batches, found at run time (this project compiles and runs
 * without the RAPIDS jar): on the driver a Dataset as an RDD of cuDF tables through RAPIDS' {@code
 * ColumnarRdd}, and on the executor RAPIDS' GPU admission ({@code GpuSemaphore}) for each task that
 * works with those tables.
 */
public final class RapidsBatches {
  public static final String COLUMNAR_RDD = "com.nvidia.spark.rapids.ColumnarRdd";
  private static final String SEMAPHORE = "com.nvidia.spark.rapids.GpuSemaphore$";
  private static final String SHIM_LOADER = "com.nvidia.spark.rapids.ShimLoader";

  private RapidsBatches() {}

  /** {@code df} as RAPIDS' device batches: an RDD of cuDF tables, each the consumer's to close. */
  @SuppressWarnings("unchecked")
  public static RDD<Table> tables(Dataset<Row> df) {
    return (RDD<Table>)
        call(
            "ColumnarRdd",
            "ColumnarRdd.convert(Dataset)",
            () -> {
              Class<?> c = Class.forName(COLUMNAR_RDD, true, RapidsBatches.class.getClassLoader());
              return c.getMethod("convert", Dataset.class).invoke(null, df);
            });
  }

  /** Takes RAPIDS' GPU admission for the running task (released at the task's end). */
  public static void admit() {
    TaskContext ctx = TaskContext.get();
    if (ctx == null) {
      return;
    }
    call(
        "GpuSemaphore",
        "GpuSemaphore",
        () -> {
          Class<?> shims = Class.forName(SHIM_LOADER, true, RapidsBatches.class.getClassLoader());
          ClassLoader shimLoader = (ClassLoader) shims.getMethod("getShimClassLoader").invoke(null);
          Class<?> sem = Class.forName(SEMAPHORE, true, shimLoader);
          Object module = sem.getField("MODULE$").get(null);
          return sem.getMethod("acquireIfNecessary", TaskContext.class).invoke(module, ctx);
        });
  }

  /** A reflective call into RAPIDS. */
  private interface Reflective {
    Object call() throws ReflectiveOperationException;
  }

  /**
   * Runs {@code call}: what RAPIDS throws comes out as it is (a checked one wrapped, naming {@code
   * what}); a class or method not found names {@code api} as not what this version expects.
   */
  private static Object call(String what, String api, Reflective call) {
    try {
      return call.call();
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      throw cause instanceof RuntimeException r
          ? r
          : new IllegalStateException("RAPIDS' " + what + " failed: " + cause, cause);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(
          "RAPIDS' " + api + " is not what this version expects: " + e, e);
    }
  }
}
