package dev.overlap.executor.input.parquet;

/**
 * cuDF could not decode a file's pages, which Spark's reader reads: the file is read on the host
 * instead ({@code DecodeFallback}). Never thrown for a fatal CUDA error, which fences the GPU.
 */
public final class DecodeFailed extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String file;

  public DecodeFailed(String file, Throwable cause) {
    super(
        file
            + ": cuDF's Parquet reader could not decode it ("
            + String.valueOf(cause.getMessage()).lines().findFirst().orElse("").trim()
            + ")",
        cause);
    this.file = file;
  }

  /** The file at fault, its path. */
  public String file() {
    return file;
  }

  /**
   * The first {@code DecodeFailed} in {@code t}'s causes, or null; null too when a cause is the
   * GPU's fence or a fatal CUDA error, which are never a file's fault.
   */
  public static DecodeFailed in(Throwable t) {
    if (dev.overlap.executor.gpu.GpuHealth.isFatal(t)) {
      return null;
    }
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof dev.overlap.executor.gpu.GpuFencedException) {
        return null;
      }
      if (c instanceof DecodeFailed d) {
        return d;
      }
      if (c.getCause() == c) {
        break;
      }
    }
    return null;
  }
}
