package dev.overlap.executor.gpu;

/**
 * Work was refused, or a task failed, because a fatal CUDA error fenced the executor's GPU ({@link
 * GpuHealth}); the message says so and what follows. The cause, when there is one, is how the task
 * met the fence.
 */
public final class GpuFencedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public GpuFencedException(String message, Throwable cause) {
    super(message, cause);
  }
}
