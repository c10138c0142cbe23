package dev.overlap.executor.resource;

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

  /**
   * After {@code primary} was thrown: runs {@code sync} (which waits for work still using {@code
   * items}, such as copies queued on a stream), then closes {@code items} in order, skipping nulls.
   * Every item is closed even when {@code sync} throws; what {@code sync} and the closes throw is
   * attached to {@code primary}, which is returned for the caller to rethrow.
   */
  public static <T extends Throwable> T afterSync(
      T primary, Runnable sync, Iterable<? extends AutoCloseable> items) {
    try {
      sync.run();
    } catch (RuntimeException | Error e) {
      primary.addSuppressed(e);
    }
    java.util.List<AutoCloseable> present = new java.util.ArrayList<>();
    for (AutoCloseable c : items) {
      if (c != null) {
        present.add(c);
      }
    }
    return after(primary, present);
  }
}
