package dev.overlap.executor.task;

import java.util.Collections;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.Function;

/** Lazy views of one iterator as another, for rows passed along on a task's thread. */
public final class Iterators {
  private Iterators() {}

  /**
   * {@code it} without its first {@code n} elements, dropped when first asked for.
   *
   * @throws IllegalStateException when {@code it} has fewer than {@code n}: the rows a task goes on
   *     from are not the rows it handed on, and going on would give another answer
   */
  static <A> Iterator<A> drop(Iterator<A> it, long n) {
    return new Iterator<>() {
      long left = n;

      @Override
      public boolean hasNext() {
        for (; left > 0; left--) {
          if (!it.hasNext()) {
            throw new IllegalStateException(
                "the input ended " + left + " rows before the " + n + " rows to go on from");
          }
          it.next();
        }
        return it.hasNext();
      }

      @Override
      public A next() {
        hasNext();
        return it.next();
      }
    };
  }

  /** {@code f} of each element of {@code it}, applied as the element is taken. */
  public static <A, B> Iterator<B> map(Iterator<A> it, Function<? super A, ? extends B> f) {
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return it.hasNext();
      }

      @Override
      public B next() {
        return f.apply(it.next());
      }
    };
  }

  /**
   * The elements of the iterator {@code f} gives for each element of {@code it}, one after the
   * other; an element is taken from {@code it} only when the previous iterator is used up.
   */
  static <A, B> Iterator<B> flatMap(
      Iterator<A> it, Function<? super A, ? extends Iterator<? extends B>> f) {
    return new Iterator<>() {
      private Iterator<? extends B> current = Collections.emptyIterator();

      @Override
      public boolean hasNext() {
        while (!current.hasNext() && it.hasNext()) {
          current = f.apply(it.next());
        }
        return current.hasNext();
      }

      @Override
      public B next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        return current.next();
      }
    };
  }
}
