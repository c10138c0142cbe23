package dev.overlap.executor.resource;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How a stage cleans up after a failure: wait for the stream, close everything, keep the cause. */
class ClosingTest {
  private final List<String> events = new ArrayList<>();

  private AutoCloseable item(String name) {
    return () -> events.add("close " + name);
  }

  @Test
  void theSyncRunsBeforeAnyItemIsClosed() {
    IllegalStateException first = new IllegalStateException("copy failed");
    IllegalStateException out =
        Closing.afterSync(first, () -> events.add("sync"), List.of(item("a"), item("b")));
    assertSame(first, out);
    assertEquals(List.of("sync", "close a", "close b"), events);
    assertEquals(0, out.getSuppressed().length);
  }

  @Test
  void aFailingSyncStillClosesEverythingAndTheFirstErrorPropagates() {
    IllegalStateException first = new IllegalStateException("copy failed");
    IllegalStateException syncFailed = new IllegalStateException("sticky CUDA error");
    IllegalStateException closeFailed = new IllegalStateException("close failed");
    IllegalStateException out =
        Closing.afterSync(
            first,
            () -> {
              events.add("sync");
              throw syncFailed;
            },
            List.of(
                item("a"),
                () -> {
                  events.add("close b");
                  throw closeFailed;
                },
                item("c")));
    assertSame(first, out);
    assertEquals(List.of("sync", "close a", "close b", "close c"), events);
    assertArrayEquals(new Throwable[] {syncFailed, closeFailed}, out.getSuppressed());
  }

  @Test
  void nullItemsAreSkipped() {
    // What download holds when a copy fails part way: the columns copied so far, then nulls.
    AutoCloseable[] host = {item("h0"), item("h1"), null, null};
    RuntimeException out =
        Closing.afterSync(new RuntimeException("copy 2 failed"), () -> {}, Arrays.asList(host));
    assertEquals(List.of("close h0", "close h1"), events);
    assertEquals(0, out.getSuppressed().length);
  }

  @Test
  void anErrorThrownBySyncWinsOverTheFailureItFollowsWhichItKeeps() {
    IllegalStateException first = new IllegalStateException("copy failed");
    OutOfMemoryError syncFailed = new OutOfMemoryError("no native thread");
    IllegalStateException closeFailed = new IllegalStateException("close failed");
    OutOfMemoryError out =
        assertThrows(
            OutOfMemoryError.class,
            () ->
                Closing.afterSync(
                    first,
                    () -> {
                      events.add("sync");
                      throw syncFailed;
                    },
                    List.of(
                        item("a"),
                        () -> {
                          events.add("close b");
                          throw closeFailed;
                        })));
    assertSame(syncFailed, out);
    assertEquals(List.of("sync", "close a", "close b"), events);
    assertArrayEquals(new Throwable[] {first, closeFailed}, out.getSuppressed());
    assertEquals(0, first.getSuppressed().length);
  }

  @Test
  void anErrorThrownBySyncAfterAnErrorIsOnlySuppressed() {
    StackOverflowError first = new StackOverflowError("upload");
    OutOfMemoryError syncFailed = new OutOfMemoryError("sync");
    StackOverflowError out =
        Closing.afterSync(
            first,
            () -> {
              throw syncFailed;
            },
            List.of(item("a")));
    assertSame(first, out);
    assertEquals(List.of("close a"), events);
    assertArrayEquals(new Throwable[] {syncFailed}, out.getSuppressed());
  }

  /** Stands in for a fatal device error (the device layer passes its own test). */
  private static final class Fatal extends RuntimeException {
    Fatal(String message) {
      super(message);
    }
  }

  @Test
  void afterAFatalFailureNothingIsSyncedOrClosed() {
    Fatal first = new Fatal("illegal address in the copy");
    Fatal out =
        Closing.afterSync(
            first, () -> events.add("sync"), List.of(item("a")), t -> t instanceof Fatal);
    assertSame(first, out);
    assertEquals(List.of(), events, "called into a broken context");
    assertEquals(0, out.getSuppressed().length);
  }

  @Test
  void aSyncThatFailsFatallyLeavesTheItemsUnclosed() {
    IllegalStateException first = new IllegalStateException("copy failed");
    Fatal syncFailed = new Fatal("sticky error");
    IllegalStateException out =
        Closing.afterSync(
            first,
            () -> {
              events.add("sync");
              throw syncFailed;
            },
            List.of(item("a"), item("b")),
            t -> t instanceof Fatal);
    assertSame(first, out);
    assertEquals(List.of("sync"), events, "freed into a broken context");
    assertArrayEquals(new Throwable[] {syncFailed}, out.getSuppressed());
  }

  @Test
  void aFailureThatIsNotFatalStillClosesEverything() {
    IllegalStateException first = new IllegalStateException("copy failed");
    IllegalStateException out =
        Closing.afterSync(
            first, () -> events.add("sync"), List.of(item("a")), t -> t instanceof Fatal);
    assertSame(first, out);
    assertEquals(List.of("sync", "close a"), events);
  }

  @Test
  void afterAFatalFailureAfterClosesNothingAndOtherwiseEverything() {
    IllegalStateException fatal = new IllegalStateException("fatal");
    assertSame(fatal, Closing.after(fatal, List.of(item("a")), t -> t == fatal));
    assertEquals(List.of(), events);
    IllegalStateException other = new IllegalStateException("other");
    assertSame(other, Closing.after(other, List.of(item("a"), item("b")), t -> t == fatal));
    assertEquals(List.of("close a", "close b"), events);
  }
}
