package dev.overlap.executor.pipeline;

/**
 * A batch did not fit in device memory even after the pipeline drained, retried and split it as far
 * as it goes. The message is one line naming what asked for memory, the bytes asked, the device
 * budget and the device's free memory; the cause is the last failed allocation.
 */
public final class OutOfDeviceMemoryException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public OutOfDeviceMemoryException(String message, Throwable cause) {
    super(message, cause);
  }
}
