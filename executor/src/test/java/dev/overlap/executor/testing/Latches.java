package dev.overlap.executor.testing;

import java.util.concurrent.CountDownLatch;

/** Waits the tests use to stand for native calls. */
public final class Latches {
  private Latches() {}

  /** As a native call: an interrupt does not end the wait, and stays pending afterwards. */
  public static void awaitThroughInterrupts(CountDownLatch latch) {
    boolean interrupted = false;
    while (true) {
      try {
        latch.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
