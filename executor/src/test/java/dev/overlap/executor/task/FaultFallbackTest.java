package dev.overlap.executor.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.overlap.executor.gpu.GpuFencedException;
import dev.overlap.executor.input.parquet.DecodeFaulted;
import dev.overlap.executor.input.parquet.FileSplit;
import dev.overlap.executor.testing.CudaErrors;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A Parquet partition whose GPU failed fatally goes on on the kernel's CPU implementation in the
 * same task, from the first input row whose results were not handed on, saying which file faulted;
 * where those rows are not known and some were handed on, or for any other failure, the task fails
 * as it is. The GPU's rows are stood in for by iterators here.
 */
class FaultFallbackTest {
  private final List<String> fellBack = new ArrayList<>();
  private final List<Long> fellBackFrom = new ArrayList<>();
  private int cpusMade;

  private static Iterator<Integer> gpu(int rows, RuntimeException failure) {
    return FailingRows.after(rows, failure);
  }

  private long handedOn = -1;
  private final List<Long> cpuFrom = new ArrayList<>();

  /** The CPU's rows of the partition 1..6 from input row {@code from} on (the kernel: x -> x). */
  private FaultFallback<Integer> fallback(Iterator<Integer> gpu) {
    return new FaultFallback<>(
        gpu,
        from -> {
          cpusMade++;
          cpuFrom.add(from);
          return List.of(1, 2, 3, 4, 5, 6).subList((int) from, 6).iterator();
        },
        () -> handedOn,
        (why, from) -> {
          fellBack.add(why);
          fellBackFrom.add(from);
        });
  }

  private static List<Integer> all(Iterator<Integer> it) {
    List<Integer> out = new ArrayList<>();
    it.forEachRemaining(out::add);
    return out;
  }

  private static DecodeFaulted faulted() {
    FileSplit f = new FileSplit("file:/data/bad.parquet", 0, 100, 100, 7);
    return new DecodeFaulted(f, CudaErrors.fatal("cudaErrorIllegalAddress: an illegal address"));
  }

  @Test
  void aFaultedDecodeBeforeAnyRowRunsThePartitionOnTheCpuNamingTheFile() {
    assertEquals(List.of(1, 2, 3, 4, 5, 6), all(fallback(gpu(0, faulted()))));
    assertEquals(List.of(0L), cpuFrom);
    assertEquals(
        List.of(
            "bad.parquet: the GPU failed fatally while decoding it; the partition ran on the"
                + " kernel's CPU implementation"),
        fellBack);
  }

  @Test
  void anotherTasksFenceBeforeAnyRowRunsThePartitionOnTheCpuToo() {
    GpuFencedException fenced = new GpuFencedException("GPU 0 failed: ...; fenced", null);
    assertEquals(List.of(1, 2, 3, 4, 5, 6), all(fallback(gpu(0, fenced))));
    assertEquals(
        List.of(
            "the GPU failed fatally during this task; the partition ran on the kernel's CPU"
                + " implementation"),
        fellBack);
  }

  @Test
  void afterRowsWereGivenTheCpuGoesOnFromTheRowsTheirBatchesCover() {
    handedOn = 2; // the GPU gave its rows for the first two input rows: -1, -2
    List<Integer> out = all(fallback(gpu(2, faulted())));
    assertEquals(List.of(-1, -2, 3, 4, 5, 6), out);
    assertEquals(List.of(2L), cpuFrom);
    // The caller learns the row too: the GPU's part counts the input rows up to it.
    assertEquals(List.of(2L), fellBackFrom);
    assertEquals(
        List.of(
            "bad.parquet: the GPU failed fatally while decoding it; the partition went on from its"
                + " input row 2 on the kernel's CPU implementation"),
        fellBack);
  }

  @Test
  void aBatchTheKernelLeavesToTheCpuGoesOnFromTheRowsHandedOn() {
    handedOn = 2;
    List<Integer> out =
        all(
            fallback(
                gpu(2, new dev.overlap.executor.api.CpuInstead("x * y may pass decimal(38, 6)"))));
    assertEquals(List.of(-1, -2, 3, 4, 5, 6), out);
    assertEquals(List.of(2L), cpuFrom);
    assertEquals(
        List.of(
            "the kernel left a batch to the CPU (x * y may pass decimal(38, 6)); the partition went"
                + " on from its input row 2 on the kernel's CPU implementation"),
        fellBack);
  }

  @Test
  void aBatchLeftFromTheStartOnlyFailsTheTaskOnceRowsWereHandedOn() {
    handedOn = 2;
    dev.overlap.executor.api.CpuInstead sum =
        new dev.overlap.executor.api.CpuInstead("a running sum", true);
    Iterator<Integer> it = fallback(gpu(2, sum));
    assertEquals(-1, it.next());
    assertEquals(-2, it.next());
    RuntimeException e = assertThrows(RuntimeException.class, it::hasNext);
    assertSame(sum, e.getCause());
    assertEquals(List.of(), cpuFrom);
    // Before any row, the CPU takes the partition over from its start.
    assertEquals(List.of(1, 2, 3, 4, 5, 6), all(fallback(gpu(0, sum))));
  }

  @Test
  void afterRowsWereGivenWithoutKnowingTheirInputRowsTheTaskFailsAsItIs() {
    DecodeFaulted f = faulted();
    Iterator<Integer> it = fallback(gpu(2, f));
    assertEquals(-1, it.next());
    assertEquals(-2, it.next());
    RuntimeException e = assertThrows(RuntimeException.class, it::hasNext);
    assertSame(f, e.getCause());
    assertEquals(0, cpusMade);
  }

  @Test
  void aFailureThatIsNotTheGpusPassesThrough() {
    IllegalStateException bug = new IllegalStateException("a bug in a kernel");
    RuntimeException e = assertThrows(RuntimeException.class, () -> all(fallback(gpu(0, bug))));
    assertSame(bug, e.getCause());
    RuntimeException oom =
        assertThrows(
            RuntimeException.class,
            () -> all(fallback(gpu(0, CudaErrors.nonFatal("out of memory")))));
    assertEquals("out of memory", oom.getCause().getMessage());
    assertEquals(0, cpusMade);
    assertEquals(List.of(), fellBack);
  }
}
