package dev.overlap.executor.pipeline;

/**
 * A stage ran on one batch past the pipeline's stall timeout ({@link StagePipeline#watchStalls}):
 * the batch's task fails with it, its message one line naming the task, the batch (and its files,
 * when it reads some), the stage, how long it had run and the setting that bounds it. The stage
 * itself is left running: a native call cannot be interrupted.
 */
public final class StageStallException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public StageStallException(String message) {
    super(message);
  }
}
