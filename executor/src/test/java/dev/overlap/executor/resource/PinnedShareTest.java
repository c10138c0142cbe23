package dev.overlap.executor.resource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The pinned share's accounting, without a GPU. */
class PinnedShareTest {

  @Test
  void cudfsDefaultHostAllocationsGoThroughTheShareWhileItIsLimited() {
    ai.rapids.cudf.HostMemoryAllocator cudfs = ai.rapids.cudf.DefaultHostMemoryAllocator.get();
    assertFalse(PinnedShare.routesDefaultAllocations());
    PinnedShare.limit(0);
    try {
      assertTrue(PinnedShare.routesDefaultAllocations());
      // No room in the share: pageable at once, nothing held, and the pool never asked.
      try (ai.rapids.cudf.HostMemoryBuffer b = ai.rapids.cudf.HostMemoryBuffer.allocate(4096)) {
        assertEquals(4096, b.getLength());
        assertEquals(0, PinnedShare.held());
      }
      PinnedShare.limit(1 << 20); // a second limit keeps the allocator cuDF had before the first
      assertTrue(PinnedShare.routesDefaultAllocations());
    } finally {
      PinnedShare.unlimited();
    }
    assertFalse(PinnedShare.routesDefaultAllocations());
    assertTrue(ai.rapids.cudf.DefaultHostMemoryAllocator.get() == cudfs);
  }

  @Test
  void unlimitedUntilALimitIsSet() {
    PinnedShare.Share s = new PinnedShare.Share();
    assertTrue(s.reserve(Long.MAX_VALUE / 2));
    assertTrue(s.reserve(Long.MAX_VALUE / 2));
    assertFalse(s.reserve(Long.MAX_VALUE / 2));
  }

  @Test
  void whatDoesNotFitIsRefusedAndNothingIsHeldForIt() {
    PinnedShare.Share s = new PinnedShare.Share();
    s.limit(1000);
    assertTrue(s.reserve(600));
    assertFalse(s.reserve(500));
    assertEquals(600, s.held());
    assertTrue(s.reserve(400));
    assertFalse(s.reserve(1));
    s.release(600);
    assertEquals(400, s.held());
    assertTrue(s.reserve(600));
    assertThrows(IllegalArgumentException.class, () -> s.limit(-1));
  }

  @Test
  void threadsReservingAtOnceNeverHoldMoreThanTheLimit() throws Exception {
    PinnedShare.Share s = new PinnedShare.Share();
    s.limit(10_000);
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<Integer>> granted = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        granted.add(
            pool.submit(
                () -> {
                  int n = 0;
                  for (int i = 0; i < 10_000; i++) {
                    if (s.reserve(7)) {
                      n++;
                    }
                  }
                  return n;
                }));
      }
      int total = 0;
      for (Future<Integer> f : granted) {
        total += f.get(30, TimeUnit.SECONDS);
      }
      assertEquals(10_000 / 7, total);
      assertEquals(10_000 / 7 * 7, s.held());
    } finally {
      pool.shutdownNow();
    }
  }
}
