package dev.overlap.executor.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.input.parquet.DecodeFailed;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A partition whose file cuDF cannot decode is read on the host: the whole partition when nothing
 * was handed on yet, else the task fails saying its retry reads the file on the host. Other
 * failures pass through untouched. The GPU's results are stood in for by iterators here.
 */
class DecodeFallbackTest {
  private final List<String> fellBack = new ArrayList<>();
  private final AtomicInteger hostsMade = new AtomicInteger();

  private static Iterator<Integer> gpu(int rows, RuntimeException failure) {
    return FailingRows.after(rows, failure);
  }

  private static DecodeFailed failed() {
    return new DecodeFailed(
        "part-0.parquet", new RuntimeException("CUDF failure at: page_decode.cu: bad page\nstack"));
  }

  private DecodeFallback<Integer> fallback(Iterator<Integer> gpu) {
    return new DecodeFallback<>(
        gpu,
        () -> {
          hostsMade.incrementAndGet();
          return List.of(1, 2, 3).iterator();
        },
        d -> fellBack.add(d.getMessage()));
  }

  private static List<Integer> all(Iterator<Integer> it) {
    List<Integer> out = new ArrayList<>();
    it.forEachRemaining(out::add);
    return out;
  }

  @Test
  void beforeAnyResultTheHostReadsTheWholePartition() {
    assertEquals(List.of(1, 2, 3), all(fallback(gpu(0, failed()))));
    assertEquals(1, hostsMade.get());
    assertEquals(
        List.of(
            "part-0.parquet: cuDF's Parquet reader could not decode it (CUDF failure at:"
                + " page_decode.cu: bad page)"),
        fellBack);
  }

  @Test
  void afterAResultTheTaskFailsSayingItsRetryReadsTheFileOnTheHost() {
    DecodeFallback<Integer> it = fallback(gpu(2, failed()));
    assertEquals(-1, it.next());
    assertEquals(-2, it.next());
    IllegalStateException e = assertThrows(IllegalStateException.class, it::hasNext);
    assertTrue(e.getMessage().startsWith("part-0.parquet: cuDF's Parquet reader"), e.getMessage());
    assertTrue(e.getMessage().endsWith("reads the file on the host"), e.getMessage());
    assertEquals(0, hostsMade.get());
    assertEquals(1, fellBack.size(), "the file is remembered for the retry");
  }

  @Test
  void aFailureBehindTheGpusFenceIsNeverAFilesFault() {
    RuntimeException fenced =
        new dev.overlap.executor.gpu.GpuFencedException("the GPU is fenced", failed());
    RuntimeException e = assertThrows(RuntimeException.class, () -> all(fallback(gpu(0, fenced))));
    assertSame(fenced, e.getCause());
    assertEquals(0, hostsMade.get());
    assertTrue(fellBack.isEmpty());
  }

  @Test
  void anyOtherFailurePassesThroughAndNoHostPathIsMade() {
    IllegalArgumentException other = new IllegalArgumentException("a kernel's own bug");
    RuntimeException e = assertThrows(RuntimeException.class, () -> all(fallback(gpu(0, other))));
    assertSame(other, e.getCause());
    assertEquals(0, hostsMade.get());
    assertTrue(fellBack.isEmpty());
  }
}
