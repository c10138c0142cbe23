package dev.overlap.executor.task;

import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * A partition's results from a first iterator, switched once to another when the first fails in a
 * way {@link #switchFor} accepts: the shared shape of {@link DecodeFallback} and {@link
 * FaultFallback}. A failure after the switch is thrown as it is.
 */
abstract class SwitchOnFailure<T> implements Iterator<T> {
  private Iterator<T> current;
  private boolean switched;
  private boolean given;

  SwitchOnFailure(Iterator<T> first) {
    this.current = first;
  }

  /**
   * The iterator to go on with after {@code e}; throws (usually {@code e}) to fail instead.
   *
   * @param given whether the first iterator had given an element
   */
  abstract Iterator<T> switchFor(RuntimeException e, boolean given);

  @Override
  public final boolean hasNext() {
    try {
      return current.hasNext();
    } catch (RuntimeException e) {
      switchTo(e);
      return current.hasNext();
    }
  }

  @Override
  public final T next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    T t;
    try {
      t = current.next();
    } catch (RuntimeException e) {
      switchTo(e);
      return next();
    }
    given = true;
    return t;
  }

  private void switchTo(RuntimeException e) {
    if (switched) {
      throw e;
    }
    Iterator<T> next = switchFor(e, given);
    switched = true;
    current = next;
  }
}
