package dev.overlap.executor.input.parquet;

/**
 * A fatal CUDA error (its cause) while cuDF decoded a file's pages: the GPU is fenced as for any
 * fatal error, and the file is recorded so that it is read on the host from then on ({@link
 * dev.overlap.executor.gpu.FaultedFiles}).
 */
public final class DecodeFaulted extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final FileSplit split;

  public DecodeFaulted(FileSplit split, Throwable fatal) {
    super(split.fileName() + ": the GPU failed fatally while decoding it", fatal);
    this.split = split;
  }

  public FileSplit split() {
    return split;
  }

  /** The first {@code DecodeFaulted} in {@code t}'s causes and what they suppressed, or null. */
  public static DecodeFaulted in(Throwable t) {
    return in(t, 0);
  }

  private static DecodeFaulted in(Throwable t, int depth) {
    if (t == null || depth > 32) {
      return null;
    }
    if (t instanceof DecodeFaulted d) {
      return d;
    }
    for (Throwable s : t.getSuppressed()) {
      DecodeFaulted d = in(s, depth + 1);
      if (d != null) {
        return d;
      }
    }
    return t.getCause() == t ? null : in(t.getCause(), depth + 1);
  }
}
