package dev.overlap.executor.pipeline;

/** A batch of one task failed in a pipeline stage; the cause is the stage's own exception. */
public final class PipelineTaskException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public PipelineTaskException(String message, Throwable cause) {
    super(message, cause);
  }
}
