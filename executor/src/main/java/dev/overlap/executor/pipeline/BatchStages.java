package dev.overlap.executor.pipeline;

/**
 * The three stages every batch passes through, each on its own executor-wide thread: upload (host
 * to device, the copy engine), compute (the kernel, the SMs) and download (device to host, the
 * second copy engine).
 *
 * <p>Ownership: the pipeline owns each stage's input and closes it after the stage returns, whether
 * the stage succeeded or threw. A stage returns a new object that the pipeline owns from then on;
 * the last stage's result belongs to the task that takes it from its {@link TaskLane}. Closing the
 * input must be safe once a call returns, and the result must be usable on the next stage's thread:
 * work still in flight on the device (the cuDF upload returns once its copies are queued) is the
 * result's to wait for, and it keeps what that work reads (the input it retained) until then.
 *
 * @param <H> a packed host batch
 * @param <D> the batch on the device
 * @param <O> the kernel's output on the device
 * @param <R> the output back on the host
 */
public interface BatchStages<
    H extends AutoCloseable,
    D extends AutoCloseable,
    O extends AutoCloseable,
    R extends AutoCloseable> {

  /** Runs on the upload thread. */
  D upload(H host) throws Exception;

  /** Runs on the compute thread. */
  O compute(D device) throws Exception;

  /** Runs on the download thread. */
  R download(O output) throws Exception;
}
