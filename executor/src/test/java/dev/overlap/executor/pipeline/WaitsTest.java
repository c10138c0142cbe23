package dev.overlap.executor.pipeline;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The task path's waits: one its cancellation ends says so and leaves the interrupt flag as it was;
 * one an interrupt ends is a plain {@link InterruptedException}.
 */
class WaitsTest {
  @AfterEach
  void clearInterrupt() {
    Thread.interrupted();
  }

  /** {@code cancelled} and {@code interrupted} each end the wait {@code waiting(cancelled)}. */
  private interface Wait {
    void run(java.util.function.BooleanSupplier cancelled) throws Exception;
  }

  private static void endsAsCancelledOrInterrupted(Wait wait) {
    Executable cancelled = () -> wait.run(() -> true);
    assertThrows(WaitCancelledException.class, cancelled);
    assertFalse(Thread.currentThread().isInterrupted(), "interrupted by a cancellation");

    Thread.currentThread().interrupt();
    assertThrows(WaitCancelledException.class, cancelled);
    assertTrue(Thread.interrupted(), "the interrupt the thread carried is kept");

    Thread.currentThread().interrupt();
    InterruptedException e = assertThrows(InterruptedException.class, () -> wait.run(Waits.NEVER));
    assertTrue(WaitCancelledException.byInterrupt(e), "an interrupt taken for a cancellation");
  }

  @Test
  void aStagingBufferWait() throws Exception {
    AutoCloseable only = () -> {};
    BoundedPool<AutoCloseable> pool = new BoundedPool<>(List.of(only));
    AutoCloseable out = pool.acquire();
    endsAsCancelledOrInterrupted(pool::acquire);
    pool.release(out);
    pool.close();
  }

  @Test
  void aDeviceBudgetWait() throws Exception {
    DeviceBudget budget = new DeviceBudget(100);
    budget.acquire(80);
    endsAsCancelledOrInterrupted(c -> budget.acquire(50, c));
    budget.release(80);
    assertTrue(budget.waiting() == 0 && budget.inFlight() == 0);
  }

  @Test
  void aResultWait() {
    ResultSlot<AutoCloseable> slot = new ResultSlot<>(0);
    endsAsCancelledOrInterrupted(c -> slot.await(c, "task"));
  }
}
