package dev.overlap.executor.device;

/** A batch whose copies to the device were queued on the copy stream. */
interface Uploaded extends AutoCloseable {
  /** Waits for the batch's copies; returns when they completed ({@link System#nanoTime}). */
  long awaitCopied();

  @Override
  void close();
}
