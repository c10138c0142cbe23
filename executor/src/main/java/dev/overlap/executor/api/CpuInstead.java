package dev.overlap.executor.api;

/**
 * Thrown by a {@link GpuKernel}'s {@code apply} when a batch cannot be computed exactly on the GPU
 * (a value outside what the kernel's types bound, say): the partition goes on through the kernel's
 * {@link GpuKernel#cpu() CPU implementation} from the first input row whose results were not handed
 * on, where those rows are known; otherwise the task fails with this message. Nothing of the batch
 * may have been returned.
 */
@Public
public class CpuInstead extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final boolean fromStartOnly;

  /**
   * @param reason why the batch is not computed on the GPU, for the log and the job's report
   */
  public CpuInstead(String reason) {
    this(reason, false);
  }

  /**
   * @param reason why the batch is not computed on the GPU, for the log and the job's report
   * @param fromStartOnly whether the CPU may take the partition over only from its first row
   */
  public CpuInstead(String reason, boolean fromStartOnly) {
    super(reason);
    this.fromStartOnly = fromStartOnly;
  }

  /** Whether the CPU may take the partition over only from its first row. */
  public boolean fromStartOnly() {
    return fromStartOnly;
  }

  /** The {@code CpuInstead} in {@code e}'s causes, or null. */
  public static CpuInstead in(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof CpuInstead i) {
        return i;
      }
    }
    return null;
  }
}
