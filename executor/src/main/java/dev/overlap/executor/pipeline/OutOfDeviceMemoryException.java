package dev.overlap.executor.pipeline;

/**
 * A batch did not fit in device memory even after the pipeline drained, retried and split it as far
 * as it goes. The message is one line naming what asked for memory, the bytes asked, the device
 * budget and the device's free memory.
 *
 * <p>The last failed allocation is attached as suppressed, not as the cause: cuDF reports it as
 * {@link OutOfMemoryError}, which Spark's executor, finding it in a failed task's cause chain
 * ({@code spark.executor.killOnFatalError.depth}), would take for a fatal error of its JVM and exit
 * on, failing every other task with it.
 */
public final class OutOfDeviceMemoryException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public OutOfDeviceMemoryException(String message, Throwable lastFailure) {
    super(message);
    if (lastFailure != null) {
      addSuppressed(lastFailure);
    }
  }
}
