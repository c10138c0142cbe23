package dev.overlap.executor.pipeline;

import dev.overlap.executor.api.PipelineStage;
import java.util.ArrayList;
import java.util.List;

/**
 * One batch's values on their way through the stages, each typed as the next stage takes it: the
 * host batch, then the batch on the device, then the kernel's output, then the result. One is held
 * at a time, and one thread touches it at a time (the stage thread that holds the batch).
 *
 * <p>Ownership: {@link #run} hands the held value to its stage; once the stage returns, the value
 * becomes {@link #closeSpent spent} input, which the caller closes, and the stage's return value is
 * held from then on. When the stage throws, the input stays held, so that the stage may run again
 * or the input be {@link #split}. {@link #close} closes what is held.
 */
final class BatchFlow<
    H extends AutoCloseable,
    D extends AutoCloseable,
    O extends AutoCloseable,
    R extends AutoCloseable> {
  private final BatchStages<H, D, O, R> stages;
  private final String about;
  private H host;
  private D device;
  private O output;
  private R result;
  private AutoCloseable spent;

  BatchFlow(BatchStages<H, D, O, R> stages, H host) {
    this(stages, host, null, describe(stages, host));
  }

  private BatchFlow(BatchStages<H, D, O, R> stages, H host, D device, String about) {
    this.stages = stages;
    this.host = host;
    this.device = device;
    this.about = about;
  }

  /** What the stages say the host batch reads; empty when nothing, or when saying so failed. */
  private static <T extends AutoCloseable> String describe(BatchStages<T, ?, ?, ?> stages, T host) {
    try {
      String about = stages.describe(host);
      return about == null ? "" : about;
    } catch (RuntimeException e) {
      return ""; // only words for a message: never a reason to lose the batch
    }
  }

  BatchStages<H, D, O, R> stages() {
    return stages;
  }

  /** What the batch reads (a Parquet batch's files), for messages; empty when nothing is known. */
  String about() {
    return about;
  }

  /** Runs {@code stage} on the value it takes. */
  void run(PipelineStage stage) throws Exception {
    switch (stage) {
      case UPLOAD -> {
        device = stages.upload(host);
        spent = host;
        host = null;
      }
      case COMPUTE -> {
        output = stages.compute(device);
        spent = device;
        device = null;
      }
      case DOWNLOAD -> {
        result = stages.download(output);
        spent = output;
        output = null;
      }
      default -> throw new IllegalArgumentException(stage.name());
    }
  }

  /** The device bytes of the output held (after compute), as the stages count them. */
  long outputBytes() {
    return output == null ? 0 : stages.outputBytes(output);
  }

  /**
   * Splits the input {@code stage} failed on (the host batch at upload, the device batch at
   * compute) into flows of its parts, in order, and closes it: each part holds what it needs.
   *
   * @return empty when it cannot be split; the input is then still held
   */
  List<BatchFlow<H, D, O, R>> split(PipelineStage stage) {
    List<BatchFlow<H, D, O, R>> flows = new ArrayList<>();
    if (stage == PipelineStage.UPLOAD && host != null) {
      List<H> parts = stages.splitHost(host);
      if (!parts.isEmpty()) {
        parts.forEach(h -> flows.add(new BatchFlow<>(stages, h, null, describe(stages, h))));
        Batch.closeQuietly(host);
        host = null;
      }
    } else if (stage == PipelineStage.COMPUTE && device != null) {
      List<D> parts = stages.splitDevice(device);
      if (!parts.isEmpty()) {
        parts.forEach(d -> flows.add(new BatchFlow<>(stages, null, d, about)));
        Batch.closeQuietly(device);
        device = null;
      }
    }
    return flows;
  }

  /** Closes the input of the last {@link #run} that returned. */
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
    closeSpent();
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
