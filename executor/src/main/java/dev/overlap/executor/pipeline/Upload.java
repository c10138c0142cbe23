package dev.overlap.executor.pipeline;

import java.util.List;

/**
 * The upload stage of an input path: a packed host batch to the device, on the upload thread.
 * Ownership and failure as {@link BatchStages} states them for its upload.
 *
 * @param <H> a packed host batch
 * @param <D> the batch on the device
 */
public interface Upload<H extends AutoCloseable, D extends AutoCloseable> {
  /** Runs on the upload thread. */
  D upload(H host) throws Exception;

  /** As {@link BatchStages#splitHost}. Default: empty, the batch cannot be cut. */
  default List<H> splitHost(H host) {
    return List.of();
  }

  /**
   * As {@link BatchStages#outOfMemory} for a failure of this upload; null when {@code failure} is
   * not a failed device allocation. Default: always null.
   */
  default String outOfMemory(Throwable failure) {
    return null;
  }

  /** As {@link BatchStages#describe}. Default: empty. */
  default String describe(H host) {
    return "";
  }
}
