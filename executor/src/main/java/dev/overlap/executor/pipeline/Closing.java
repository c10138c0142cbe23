package dev.overlap.executor.pipeline;

/**
 * Closes several resources and keeps going after a failure: every one is closed, the first failure
 * is reported and later ones are attached to it as suppressed.
 */
public final class Closing {
  private Closing() {}

  /**
   * Closes {@code items} in order.
   *
   * @throws RuntimeException the first failure (a checked one wrapped in IllegalStateException),
   *     with the others suppressed
   */
  public static void all(Iterable<? extends AutoCloseable> items) {
    RuntimeException failure = null;
    for (AutoCloseable c : items) {
      try {
        c.close();
      } catch (Exception e) {
        if (failure == null) {
          failure =
              e instanceof RuntimeException r ? r : new IllegalStateException("close failed", e);
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * Closes {@code items} in order after {@code primary} was thrown, attaching any close failure to
   * it, and returns it for the caller to rethrow.
   */
  public static <T extends Throwable> T after(T primary, Iterable<? extends AutoCloseable> items) {
    try {
      all(items);
    } catch (RuntimeException e) {
      primary.addSuppressed(e);
    }
    return primary;
  }
}
