package dev.overlap.executor.task;

import dev.overlap.executor.gpu.GpuFencedException;
import dev.overlap.executor.gpu.GpuHealth;
import dev.overlap.executor.input.parquet.DecodeFaulted;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Parquet partition's rows from the GPU, from the kernel's CPU implementation instead when the
 * GPU failed fatally (or was fenced by another task's fatal error) before the partition gave any
 * row: the CUDA context cannot be used again in this process, and Spark's reader reads the files
 * again. After a row was given the task fails as it is, and Spark's retry reads on the host; the
 * file whose decode faulted is recorded either way ({@link dev.overlap.executor.gpu.FaultedFiles}).
 */
final class FaultFallback<T> implements Iterator<T> {
  private static final Logger LOG = LoggerFactory.getLogger("dev.overlap");

  private final Supplier<Iterator<T>> cpu;
  private final Consumer<String> onFallback;
  private Iterator<T> current;
  private boolean onCpu;
  private boolean given;

  /**
   * @param cpu the partition through the kernel's CPU implementation, made only when needed
   * @param onFallback told why the partition went to the CPU, before it does
   */
  FaultFallback(Iterator<T> gpu, Supplier<Iterator<T>> cpu, Consumer<String> onFallback) {
    this.current = gpu;
    this.cpu = cpu;
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
  public boolean hasNext() {
    try {
      return current.hasNext();
    } catch (RuntimeException e) {
      toCpu(e);
      return current.hasNext();
    }
  }

  @Override
  public T next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    T t;
    try {
      t = current.next();
    } catch (RuntimeException e) {
      toCpu(e);
      return next();
    }
    given = true;
    return t;
  }

  private void toCpu(RuntimeException e) {
    if (onCpu || given || !gpuLost(e)) {
      throw e;
    }
    DecodeFaulted d = DecodeFaulted.in(e);
    String reason =
        (d != null ? d.getMessage() : "the GPU failed fatally during this task")
            + "; the partition ran on the kernel's CPU implementation";
    LOG.warn("Overlap: {}", reason, e);
    onFallback.accept(reason);
    onCpu = true;
    current = cpu.get();
  }
}
