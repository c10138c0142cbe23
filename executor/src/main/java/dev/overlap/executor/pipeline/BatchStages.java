package dev.overlap.executor.pipeline;

import dev.overlap.executor.api.PipelineStage;
import java.util.List;

/**
 * The three stages every batch passes through, each on its own executor-wide thread: upload (host
 * to device, the copy engine), compute (the kernel, the SMs) and download (device to host, the
 * second copy engine).
 *
 * <p>Ownership: the pipeline owns each stage's input and closes it after the stage returns, whether
 * the stage succeeded or threw. A stage returns a new object that the pipeline owns from then on;
 * the last stage's result belongs to the task that takes it from its {@link TaskLane}. Closing the
 * input must be safe once a call returns, and the result must be usable on the next stage's thread:
 * work still in flight on the device (the cuDF upload returns once its copies are queued) is the
 * result's to wait for, and it keeps what that work reads (the input it retained) until then. A
 * stage that throws leaves its input as it was given: the pipeline may give it to the stage again.
 *
 * <p>An input path gives the {@link Upload}, the kernel the {@link Compute} and an output mode the
 * {@link Download}; {@link #of} joins them.
 *
 * <p>Out of device memory: when upload or compute throws what {@link #outOfMemory} recognizes as a
 * failed device allocation, the pipeline waits for the batches ahead of it in later stages to
 * finish (their memory and budget bytes come back), runs the stage again once, and if it fails
 * again splits the batch ({@link #splitHost}, {@link #splitDevice}) and runs the parts in order,
 * each under the same rule. Only a batch that cannot be split fails its task.
 *
 * @param <H> a packed host batch
 * @param <D> the batch on the device
 * @param <O> the kernel's output on the device
 * @param <R> the output back on the host
 */
public interface BatchStages<
    H extends AutoCloseable,
    D extends AutoCloseable,
    O extends AutoCloseable,
    R extends AutoCloseable> {

  /** Runs on the upload thread. */
  D upload(H host) throws Exception;

  /** Runs on the compute thread. */
  O compute(D device) throws Exception;

  /** Runs on the download thread. */
  R download(O output) throws Exception;

  /**
   * When {@code failure}, thrown by {@code stage} (upload or compute), is a device allocation that
   * failed: one phrase for the task's error should the batch not fit even when split as far as it
   * goes, naming what asked and for how many bytes (e.g. "kernel q1 asked for 1.00 GiB in
   * compute"). Null for any other failure, which fails the task at once. Default: always null.
   */
  default String outOfMemory(PipelineStage stage, Throwable failure) {
    return null;
  }

  /**
   * Cuts a host batch whose upload did not fit into parts that together hold its rows, in order.
   * Each part holds what it needs (its own references); the caller still closes {@code host}. Empty
   * when it cannot be cut. When it throws, it has closed the parts it made. Default: empty.
   */
  default List<H> splitHost(H host) {
    return List.of();
  }

  /** As {@link #splitHost}, for a batch on the device whose compute did not fit. */
  default List<D> splitDevice(D device) {
    return List.of();
  }

  /**
   * Device bytes of a kernel's output, counted in the pipeline's device budget from the end of
   * compute until the download is done. Default: 0.
   */
  default long outputBytes(O output) {
    return 0;
  }

  /** The device's free memory for an out-of-memory error's line; negative when unknown. */
  default long freeDeviceBytes() {
    return -1;
  }

  /**
   * What {@code host} reads, for a line about its batch (a Parquet batch's files); empty when its
   * index says it all. Called on the task's thread when the batch is submitted. Default: empty.
   */
  default String describe(H host) {
    return "";
  }

  /**
   * What {@code stage} is doing now for this task's batch when its label alone does not say
   * ("Parquet decode", "kernel q6"), for the line of a stage that stalled; null otherwise. Called
   * from another thread while the stage runs: it must not block. Default: null.
   */
  default String doing(PipelineStage stage) {
    return null;
  }

  /** The three pieces as one set of stages. */
  static <
          H extends AutoCloseable,
          D extends AutoCloseable,
          O extends AutoCloseable,
          R extends AutoCloseable>
      BatchStages<H, D, O, R> of(
          Upload<H, D> upload, Compute<D, O> compute, Download<O, R> download) {
    return new BatchStages<>() {
      @Override
      public D upload(H host) throws Exception {
        return upload.upload(host);
      }

      @Override
      public O compute(D device) throws Exception {
        return compute.compute(device);
      }

      @Override
      public R download(O output) throws Exception {
        return download.download(output);
      }

      @Override
      public String outOfMemory(PipelineStage stage, Throwable failure) {
        return switch (stage) {
          case UPLOAD -> upload.outOfMemory(failure);
          case COMPUTE -> compute.outOfMemory(failure);
          default -> null;
        };
      }

      @Override
      public List<H> splitHost(H host) {
        return upload.splitHost(host);
      }

      @Override
      public List<D> splitDevice(D device) {
        return compute.splitDevice(device);
      }

      @Override
      public long outputBytes(O output) {
        return compute.outputBytes(output);
      }

      @Override
      public long freeDeviceBytes() {
        return compute.freeDeviceBytes();
      }

      @Override
      public String describe(H host) {
        return upload.describe(host);
      }

      @Override
      public String doing(PipelineStage stage) {
        return switch (stage) {
          case COMPUTE -> compute.doing();
          case DOWNLOAD -> download.doing();
          default -> null;
        };
      }
    };
  }
}
