package dev.overlap.executor.resource;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

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
   * As {@link #after(Throwable, Iterable)}, but closes nothing when {@code fatal} holds for {@code
   * primary}: after a fatal device error the items stay allocated rather than being freed into the
   * broken context.
   */
  public static <T extends Throwable> T after(
      T primary, Iterable<? extends AutoCloseable> items, Predicate<Throwable> fatal) {
    return fatal.test(primary) ? primary : after(primary, items);
  }

  /**
   * After {@code primary} was thrown: runs {@code sync} (which waits for work still using {@code
   * items}, such as copies queued on a stream), then closes {@code items} in order, skipping nulls.
   * Every item is closed even when {@code sync} throws; what {@code sync} and the closes throw is
   * attached to {@code primary}, which is returned for the caller to rethrow, except that an {@link
   * Error} thrown by {@code sync} when {@code primary} is none is thrown from here instead, after
   * the closes, with {@code primary} and the close failures attached to it.
   */
  public static <T extends Throwable> T afterSync(
      T primary, Runnable sync, Iterable<? extends AutoCloseable> items) {
    return afterSync(primary, sync, items, t -> false);
  }

  /**
   * As {@link #afterSync(Throwable, Runnable, Iterable)}, but when {@code fatal} holds for {@code
   * primary} (then {@code sync} is not run) or for what {@code sync} throws, no item is closed:
   * after such a failure (a fatal device error, which leaves the device's context unusable) they
   * stay allocated rather than being freed into the broken context.
   *
   * @param fatal whether a failure leaves the resources of {@code items} unusable, even to free
   */
  public static <T extends Throwable> T afterSync(
      T primary,
      Runnable sync,
      Iterable<? extends AutoCloseable> items,
      Predicate<Throwable> fatal) {
    Throwable thrown = primary;
    boolean broken = fatal.test(primary);
    if (!broken) {
      try {
        sync.run();
      } catch (RuntimeException | Error e) {
        broken = fatal.test(e);
        if (e instanceof Error error && !(primary instanceof Error)) {
          error.addSuppressed(primary);
          thrown = error;
        } else {
          primary.addSuppressed(e);
        }
      }
    }
    if (!broken) {
      List<AutoCloseable> present = new ArrayList<>();
      for (AutoCloseable c : items) {
        if (c != null) {
          present.add(c);
        }
      }
      after(thrown, present);
    }
    if (thrown != primary) {
      throw (Error) thrown;
    }
    return primary;
  }
}
