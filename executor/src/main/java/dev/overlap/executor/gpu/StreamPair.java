package dev.overlap.executor.gpu;

import ai.rapids.cudf.Cuda;

/**
 * The executor's streams: a non-blocking stream for host-to-device copies and one for
 * device-to-host copies. Kernels run on the pipeline's compute thread, on its per-thread default
 * stream (cuDF's compute calls take no stream), which is the third leg of the overlap.
 */
public final class StreamPair implements AutoCloseable {
  private final Cuda.Stream copy;
  private final Cuda.Stream download;
  private boolean closed;
  // Touched by the upload thread only.
  private Uploaded lastUpload;

  public StreamPair() {
    this.copy = new Cuda.Stream(true);
    Cuda.Stream d;
    try {
      d = new Cuda.Stream(true);
    } catch (RuntimeException e) {
      copy.close();
      throw e;
    }
    this.download = d;
  }

  /** Host-to-device copies. */
  public Cuda.Stream copyStream() {
    return copy;
  }

  /** Device-to-host copies. */
  public Cuda.Stream downloadStream() {
    return download;
  }

  /**
   * Records {@code batch} as the newest upload on the copy stream and returns the one before it,
   * whose copies the caller waits for. Called from the upload thread only.
   */
  public Uploaded swapLastUpload(Uploaded batch) {
    Uploaded previous = lastUpload;
    lastUpload = batch;
    return previous;
  }

  @Override
  public synchronized void close() {
    if (closed) {
      throw new IllegalStateException("StreamPair closed twice");
    }
    closed = true;
    try {
      copy.close();
    } finally {
      download.close();
    }
  }
}
