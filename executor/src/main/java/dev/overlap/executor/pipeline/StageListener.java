package dev.overlap.executor.pipeline;

import dev.overlap.executor.api.PipelineStage;

/**
 * Told when a stage of a batch starts and ends, on the thread that runs it: the pipeline's upload,
 * compute and download threads, and the task's own thread for {@link PipelineStage#PACK}. Both
 * calls of one stage come from the same thread, start before end, so a listener may keep per-thread
 * state (an NVTX range) between them.
 *
 * <p>Times are {@link System#nanoTime} readings taken by the caller. A listener must be quick and
 * must not throw; the pipeline logs and ignores what it throws. With no listener set the pipeline
 * pays one volatile read per stage.
 */
public interface StageListener {
  void stageStarted(StageRun run);

  /**
   * @param ok false when the stage threw
   */
  void stageEnded(StageRun run, long endNanos, boolean ok);

  /** Both listeners, {@code first} told first at the start and last at the end; nulls skipped. */
  static StageListener both(StageListener first, StageListener second) {
    if (first == null) {
      return second;
    }
    if (second == null) {
      return first;
    }
    return new StageListener() {
      @Override
      public void stageStarted(StageRun run) {
        first.stageStarted(run);
        second.stageStarted(run);
      }

      @Override
      public void stageEnded(StageRun run, long end, boolean ok) {
        second.stageEnded(run, end, ok);
        first.stageEnded(run, end, ok);
      }
    };
  }
}
