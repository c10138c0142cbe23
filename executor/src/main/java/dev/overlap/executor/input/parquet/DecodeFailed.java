package dev.overlap.executor.input.parquet;

/**
 * cuDF could not decode a file's pages, which Spark's reader reads: the file is read on the host
 * instead ({@code DecodeFallback}). Never thrown for a fatal CUDA error, which fences the GPU.
 */
public final class DecodeFailed extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String file;

  public DecodeFailed(String file, Throwable cause) {
    this(
        file,
        file
            + ": cuDF's Parquet reader could not decode it ("
            + String.valueOf(cause.getMessage()).lines().findFirst().orElse("").trim()
            + ")",
        cause);
  }

  private DecodeFailed(String file, String message, Throwable cause) {
    super(message, cause);
    this.file = file;
  }

  /**
   * A file whose levels break Parquet's rules ({@link LevelCheck}): cuDF would decode other values
   * than Spark's reader reads, so it is not given to cuDF.
   */
  static DecodeFailed levels(String file, String why) {
    return new DecodeFailed(
        file, file + ": " + why + "; cuDF would decode other values than Spark reads", null);
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
