package dev.overlap.executor.pipeline;

/**
 * One batch's values on their way through the stages, each typed as the next stage takes it: the
 * host batch, then the batch on the device, then the kernel's output, then the result. One is held
 * at a time, and one thread touches it at a time (the stage thread that holds the batch).
 *
 * <p>Ownership: {@link #run} hands the held value to its stage and keeps it as {@link #closeSpent
 * spent} input, which the caller closes after the stage returns, success or failure; the stage's
 * return value is held from then on. {@link #close} closes what is held.
 */
final class BatchFlow<
    H extends AutoCloseable,
    D extends AutoCloseable,
    O extends AutoCloseable,
    R extends AutoCloseable> {
  private final BatchStages<H, D, O, R> stages;
  private H host;
  private D device;
  private O output;
  private R result;
  private AutoCloseable spent;

  BatchFlow(BatchStages<H, D, O, R> stages, H host) {
    this.stages = stages;
    this.host = host;
  }

  /** Runs {@code stage} on the value it takes. */
  void run(Stage stage) throws Exception {
    switch (stage) {
      case UPLOAD -> {
        H in = host;
        host = null;
        spent = in;
        device = stages.upload(in);
      }
      case COMPUTE -> {
        D in = device;
        device = null;
        spent = in;
        output = stages.compute(in);
      }
      case DOWNLOAD -> {
        O in = output;
        output = null;
        spent = in;
        result = stages.download(in);
      }
      default -> throw new IllegalArgumentException(stage.name());
    }
  }

  /** Closes the input of the last {@link #run}. */
  void closeSpent() {
    AutoCloseable in = spent;
    spent = null;
    Batch.closeQuietly(in);
  }

  /** The last stage's result; the caller owns it. */
  R takeResult() {
    R r = result;
    result = null;
    return r;
  }

  /** Closes the value held, whichever stage it is at. */
  void close() {
    Batch.closeQuietly(host);
    Batch.closeQuietly(device);
    Batch.closeQuietly(output);
    Batch.closeQuietly(result);
    host = null;
    device = null;
    output = null;
    result = null;
  }
}
