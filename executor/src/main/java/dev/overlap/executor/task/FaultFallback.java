package dev.overlap.executor.task;

import dev.overlap.executor.api.CpuInstead;
import dev.overlap.executor.gpu.GpuFencedException;
import dev.overlap.executor.gpu.GpuHealth;
import dev.overlap.executor.input.parquet.DecodeFaulted;
import java.util.Iterator;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;
import java.util.function.ObjLongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Parquet partition's rows from the GPU, from the kernel's CPU implementation instead once the
 * GPU failed fatally (or was fenced by another task's fatal error), or the kernel left a batch to
 * the CPU ({@link CpuInstead}, the GPU still sound). After a fatal error the CUDA context cannot be
 * used again in this process. Either way Spark's reader reads the files again: the CPU goes on from
 * the first input row whose results were not handed on: from the start when none were, else from
 * the rows the batches handed on whole cover. Where those are not known (a batch split into parts,
 * a Delta table's deleted rows), a task that handed on rows fails as it is, and Spark's retry reads
 * on the host. The file whose decode faulted is recorded either way ({@link
 * dev.overlap.executor.gpu.FaultedFiles}).
 */
final class FaultFallback<T> extends SwitchOnFailure<T> {
  private static final Logger LOG = LoggerFactory.getLogger("dev.overlap");

  private final LongFunction<Iterator<T>> cpu;
  private final LongSupplier handedOn;
  private final ObjLongConsumer<String> onFallback;

  /**
   * @param cpu the partition through the kernel's CPU implementation from an input row on, made
   *     only when needed
   * @param handedOn the input rows the results handed on cover; -1 when not known
   * @param onFallback told why the partition went to the CPU and from which input row, before it
   *     does
   */
  FaultFallback(
      Iterator<T> gpu,
      LongFunction<Iterator<T>> cpu,
      LongSupplier handedOn,
      ObjLongConsumer<String> onFallback) {
    super(gpu);
    this.cpu = cpu;
    this.handedOn = handedOn;
    this.onFallback = onFallback;
  }

  /** Whether {@code e} says the GPU failed fatally or is fenced. */
  static boolean gpuLost(Throwable e) {
    if (GpuHealth.isFatal(e)) {
      return true;
    }
    for (Throwable c = e; c != null && c.getCause() != c; c = c.getCause()) {
      if (c instanceof GpuFencedException) {
        return true;
      }
    }
    return false;
  }

  @Override
  Iterator<T> switchFor(RuntimeException e, boolean given) {
    CpuInstead declined = CpuInstead.in(e);
    if (declined == null && !gpuLost(e)) {
      throw e;
    }
    long from = given ? handedOn.getAsLong() : 0;
    if (from < 0 || (declined != null && declined.fromStartOnly() && from > 0)) {
      throw e;
    }
    if (declined != null) {
      String reason =
          "the kernel left a batch to the CPU ("
              + declined.getMessage()
              + "); the partition "
              + (from == 0 ? "ran" : "went on from its input row " + from)
              + " on the kernel's CPU implementation";
      LOG.info("Overlap: {}", reason);
      onFallback.accept(reason, from);
      return cpu.apply(from);
    }
    DecodeFaulted d = DecodeFaulted.in(e);
    String reason =
        (d != null ? d.getMessage() : "the GPU failed fatally during this task")
            + "; the partition "
            + (from == 0 ? "ran" : "went on from its input row " + from)
            + " on the kernel's CPU implementation";
    LOG.warn("Overlap: {}", reason, e);
    onFallback.accept(reason, from);
    return cpu.apply(from);
  }
}
