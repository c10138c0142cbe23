package dev.overlap.executor.gpu;

/** A batch whose copies to the device were queued on the copy stream. */
public interface Uploaded extends AutoCloseable {
  /** Waits for the batch's copies; returns when they completed ({@link System#nanoTime}). */
  long awaitCopied();

  @Override
  void close();
}
