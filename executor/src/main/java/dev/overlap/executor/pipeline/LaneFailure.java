package dev.overlap.executor.pipeline;

import dev.overlap.executor.api.PipelineStage;

/**
 * The first failure among one lane's batches: the index of the first batch that failed (those from
 * it on are dropped) and the {@link PipelineTaskException} its task sees.
 */
final class LaneFailure {
  private final String taskName;
  private volatile Throwable failure;
  // The index of the first batch that failed; the batches from it on are dropped.
  private volatile long failedIndex = Long.MAX_VALUE;

  LaneFailure(String taskName) {
    this.taskName = taskName;
  }

  /** Whether a batch failed. */
  boolean happened() {
    return failure != null;
  }

  /** Whether batch {@code index} comes before the first that failed. */
  boolean before(long index) {
    return index < failedIndex;
  }

  /** Batch {@code b} failed in {@code stage} with {@code t}; the first failure is kept. */
  synchronized void record(Batch<?> b, PipelineStage stage, Throwable t) {
    failedIndex = Math.min(failedIndex, b.index());
    if (failure == null) {
      String why = t instanceof OutOfDeviceMemoryException ? t.getMessage() : t.toString();
      // A stall's line names the task, batch and stage itself.
      String line =
          t instanceof StageStallException
              ? t.getMessage()
              : taskName + ": batch " + b.name() + " failed in " + stage.label() + ": " + why;
      failure = new PipelineTaskException(line, t);
    }
  }

  /** Why a batch of the lane that will not run is dropped. */
  Throwable abandonCause() {
    Throwable f = failure;
    return f != null
        ? f
        : new IllegalStateException(taskName + ": task ended before the batch ran");
  }

  /**
   * @throws PipelineTaskException when a batch failed
   */
  void check() {
    Throwable f = failure;
    if (f != null) {
      throw (f instanceof PipelineTaskException p)
          ? p
          : new PipelineTaskException(taskName + ": an earlier batch failed", f);
    }
  }
}
