package dev.overlap.executor.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
}
