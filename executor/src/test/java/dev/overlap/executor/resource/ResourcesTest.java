package dev.overlap.executor.resource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class ResourcesTest {
  /** Counts its closes; the one given fails its close. */
  static final class Thing implements AutoCloseable {
    int closes;
    final RuntimeException onClose;

    Thing(RuntimeException onClose) {
      this.onClose = onClose;
    }

    @Override
    public void close() {
      closes++;
      if (onClose != null) {
        throw onClose;
      }
    }
  }

  @Test
  void withResourceClosesOnceAfterTheBodyWhateverHappened() {
    Thing ok = new Thing(null);
    assertEquals("done", Resources.withResource(ok, t -> "done"));
    assertEquals(1, ok.closes);
    Thing failing = new Thing(null);
    IllegalStateException boom = new IllegalStateException("boom");
    assertSame(
        boom,
        assertThrows(
            IllegalStateException.class,
            () ->
                Resources.withResource(
                    failing,
                    t -> {
                      throw boom;
                    })));
    assertEquals(1, failing.closes);
  }

  @Test
  void closeOnExceptClosesOnlyWhenTheBodyThrowsAndKeepsItsFailureFirst() {
    Thing kept = new Thing(null);
    assertSame(kept, Resources.closeOnExcept(kept, t -> t));
    assertEquals(0, kept.closes);
    IllegalArgumentException closeFailed = new IllegalArgumentException("close failed");
    Thing failing = new Thing(closeFailed);
    Error boom = new AssertionError("boom");
    Error e =
        assertThrows(
            AssertionError.class,
            () ->
                Resources.closeOnExcept(
                    failing,
                    t -> {
                      throw boom;
                    }));
    assertSame(boom, e);
    assertEquals(1, failing.closes);
    assertSame(closeFailed, e.getSuppressed()[0]);
  }

  @Test
  void closeOnExceptOfSeveralClosesEveryOneOnFailure() {
    List<Thing> things = List.of(new Thing(new IllegalStateException("x")), new Thing(null));
    assertThrows(
        UnsupportedOperationException.class,
        () ->
            Resources.closeOnExcept(
                things,
                t -> {
                  throw new UnsupportedOperationException();
                }));
    assertEquals(List.of(1, 1), things.stream().map(t -> t.closes).toList());
  }
}
