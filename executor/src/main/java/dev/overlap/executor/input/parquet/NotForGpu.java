package dev.overlap.executor.input.parquet;

/** Why the GPU cannot read a file exactly as Spark would; the host path reads it instead. */
public final class NotForGpu extends Exception {
  private static final long serialVersionUID = 1L;

  public NotForGpu(String reason) {
    super(reason, null, false, false);
  }

  /** The reason, one line, naming the file and the column at fault. */
  public String reason() {
    return getMessage();
  }
}
