package dev.overlap.executor.resource;

import java.util.List;
import java.util.function.Function;

/**
 * Ownership in the shape of a call, so that the happy path reads straight: {@link #withResource}
 * closes what it is given once the body is done, {@link #closeOnExcept} only when the body throws
 * (on success the resource has usually become part of what the body returns). A failure to close
 * after the body failed is attached to the body's failure, never thrown in its place; after a body
 * that succeeded, {@link #withResource} throws it. spark-rapids' {@code Arm} is the model.
 */
public final class Resources {
  private Resources() {}

  /** {@code body(r)}, then {@code r} closed, whatever happened. */
  public static <T extends AutoCloseable, R> R withResource(T r, Function<T, R> body) {
    R out;
    try {
      out = body.apply(r);
    } catch (RuntimeException | Error e) {
      Closing.after(e, List.of(r));
      throw e;
    }
    Closing.all(List.of(r));
    return out;
  }

  /** {@code body(r)}; {@code r} is closed only when it throws, and stays the caller's otherwise. */
  public static <T extends AutoCloseable, R> R closeOnExcept(T r, Function<T, R> body) {
    try {
      return body.apply(r);
    } catch (RuntimeException | Error e) {
      Closing.after(e, List.of(r));
      throw e;
    }
  }

  /** As {@link #closeOnExcept(AutoCloseable, Function)}, for several: all are closed on failure. */
  public static <T extends AutoCloseable, R> R closeOnExcept(
      List<T> rs, Function<List<T>, R> body) {
    try {
      return body.apply(rs);
    } catch (RuntimeException | Error e) {
      Closing.after(e, rs);
      throw e;
    }
  }
}
