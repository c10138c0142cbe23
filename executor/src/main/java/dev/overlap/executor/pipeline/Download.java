package dev.overlap.executor.pipeline;

/**
 * The download stage of an output mode: the kernel's output on the device to what the task takes,
 * on the download thread. Ownership and failure as {@link BatchStages} states them.
 *
 * @param <O> the kernel's output on the device
 * @param <R> what the task takes from its lane
 */
public interface Download<O extends AutoCloseable, R extends AutoCloseable> {
  /** Runs on the download thread. */
  R download(O output) throws Exception;

  /** As {@link BatchStages#doing} for the download. Default: null. */
  default String doing() {
    return null;
  }
}
