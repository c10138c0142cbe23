package dev.overlap.executor.pipeline;

import java.util.List;

/**
 * The compute stage: a batch on the device to the kernel's output on the device, on the compute
 * thread. Ownership and failure as {@link BatchStages} states them for its compute.
 *
 * @param <D> the batch on the device
 * @param <O> the kernel's output on the device
 */
public interface Compute<D extends AutoCloseable, O extends AutoCloseable> {
  /** Runs on the compute thread. */
  O compute(D device) throws Exception;

  /** As {@link BatchStages#splitDevice}. Default: empty. */
  default List<D> splitDevice(D device) {
    return List.of();
  }

  /** As {@link BatchStages#outputBytes}. Default: 0. */
  default long outputBytes(O output) {
    return 0;
  }

  /** As {@link BatchStages#outOfMemory}, for a failure of this stage. Default: always null. */
  default String outOfMemory(Throwable failure) {
    return null;
  }

  /** As {@link BatchStages#freeDeviceBytes}. Default: unknown. */
  default long freeDeviceBytes() {
    return -1;
  }

  /** As {@link BatchStages#doing} for compute. Default: null. */
  default String doing() {
    return null;
  }
}
