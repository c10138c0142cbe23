package dev.overlap.executor.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class DeviceBudgetTest {
  @Test
  void releaseMoreThanHeldIsABug() throws Exception {
    DeviceBudget b = new DeviceBudget(100);
    b.acquire(40);
    assertThrows(IllegalStateException.class, () -> b.release(41));
    b.release(40);
    assertEquals(0, b.inFlight());
    assertEquals(40, b.peak());
  }

  @Test
  void nonPositiveBudgetIsRejected() {
    assertThrows(IllegalArgumentException.class, () -> new DeviceBudget(0));
  }

  /** Until {@code n} requests wait in the budget's line (a request joins it before it waits). */
  private static void awaitWaiting(DeviceBudget b, int n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (b.waiting() != n) {
      assertTrue(System.nanoTime() < deadline, "waiting " + b.waiting() + ", not " + n);
      Thread.sleep(1);
    }
  }

  /** Acquires on a thread of its own; done once admitted. */
  private static CompletableFuture<Void> acquireLater(DeviceBudget b, long bytes) {
    return CompletableFuture.runAsync(
        () -> {
          try {
            b.acquire(bytes);
          } catch (InterruptedException e) {
            throw new RuntimeException(e);
          }
        },
        r -> new Thread(r, "acquire-" + bytes).start());
  }

  @Test
  void aLargeRequestIsNotOvertakenBySmallOnesThatCameLater() throws Exception {
    DeviceBudget b = new DeviceBudget(100);
    b.acquire(50);
    CompletableFuture<Void> large = acquireLater(b, 90);
    awaitWaiting(b, 1);
    assertFalse(large.isDone(), "90 bytes do not fit beside 50");
    // Fifty small requests that each fit beside the 50 held: they queue behind the large one.
    List<CompletableFuture<Void>> small = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      small.add(acquireLater(b, 20));
    }
    awaitWaiting(b, 51);
    for (CompletableFuture<Void> f : small) {
      assertFalse(f.isDone(), "a later request was admitted while an earlier one waited");
    }
    assertEquals(50, b.inFlight());
    b.release(50);
    large.get(5, TimeUnit.SECONDS);
    assertEquals(90, b.inFlight());
    b.release(90);
    // Then the small ones, five at a time.
    int admitted = 0;
    while (admitted < 50) {
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (b.inFlight() < Math.min(100, 20L * (50 - admitted)) && System.nanoTime() < until) {
        Thread.sleep(2);
      }
      long held = b.inFlight();
      assertTrue(held > 0 && held <= 100, "held " + held);
      b.release(held);
      admitted += (int) (held / 20);
    }
    CompletableFuture.allOf(small.toArray(CompletableFuture[]::new)).get(5, TimeUnit.SECONDS);
    assertEquals(0, b.inFlight());
    assertEquals(100, b.peak());
  }

  @Test
  void aRequestLargerThanTheBudgetRunsAloneAndInTurn() throws Exception {
    DeviceBudget b = new DeviceBudget(100);
    b.acquire(10);
    CompletableFuture<Void> huge = acquireLater(b, 250);
    awaitWaiting(b, 1);
    CompletableFuture<Void> small = acquireLater(b, 10);
    awaitWaiting(b, 2);
    assertFalse(huge.isDone(), "it runs alone");
    assertFalse(small.isDone(), "it came after the large request");
    b.release(10);
    huge.get(5, TimeUnit.SECONDS);
    assertEquals(250, b.inFlight());
    // The huge one admitted, the small one still in line: it may not run beside it.
    awaitWaiting(b, 1);
    assertFalse(small.isDone());
    b.release(250);
    small.get(5, TimeUnit.SECONDS);
    assertEquals(10, b.inFlight());
    b.release(10);
  }

  @Test
  void aWaitEndsWhenItsTaskIsCancelledAndLeavesTheLineMoving() throws Exception {
    DeviceBudget b = new DeviceBudget(100);
    b.acquire(80);
    java.util.concurrent.atomic.AtomicBoolean killed =
        new java.util.concurrent.atomic.AtomicBoolean();
    CompletableFuture<Throwable> cancelled =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                b.acquire(50, killed::get);
                return null;
              } catch (Throwable t) {
                return t;
              }
            },
            r -> new Thread(r, "cancelled").start());
    awaitWaiting(b, 1);
    CompletableFuture<Void> after = acquireLater(b, 20);
    awaitWaiting(b, 2);
    assertFalse(cancelled.isDone());
    assertFalse(after.isDone(), "it waits behind the first request");
    killed.set(true);
    Throwable t = cancelled.get(5, TimeUnit.SECONDS);
    assertTrue(t instanceof InterruptedException, "got " + t);
    after.get(5, TimeUnit.SECONDS);
    assertEquals(100, b.inFlight());
    assertEquals(0, b.waiting());
    b.release(100);
  }
}
