package dev.overlap.executor.compute;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.GpuKernel;
import dev.overlap.executor.gpu.DeviceMemory;
import dev.overlap.executor.gpu.GpuHealth;
import dev.overlap.executor.pipeline.Compute;
import dev.overlap.executor.resource.Closing;
import dev.overlap.executor.resource.Resources;
import java.util.List;

/**
 * The kernel stage, whatever the input path: the input's table ({@link KernelInput}), the kernel on
 * the compute thread's per-thread default stream, then a sync of that stream. The {@link
 * DeviceResult} it hands on keeps what the kernel read until the kernel's event, so no memory a
 * kernel reads is freed early; its output counts in the device budget until it is downloaded.
 *
 * @param <D> the input path's batch on the device
 */
public final class KernelStage<D extends AutoCloseable> implements Compute<D, DeviceResult> {
  private final GpuKernel kernel;
  private final KernelInput<D> input;
  // What the compute thread last did, for an out-of-memory line: the input's step or the kernel.
  private volatile String step = "kernel";

  public KernelStage(GpuKernel kernel, KernelInput<D> input) {
    this.kernel = kernel;
    this.input = input;
  }

  @Override
  public DeviceResult compute(D batch) {
    String making = input.step();
    step = making == null ? "kernel" : making;
    KernelInput.Kept in = input.table(batch);
    step = "kernel";
    return run(kernel, in.table(), in.keep());
  }

  /**
   * Runs {@code kernel} on {@code input} on this thread's stream and waits for its work; the result
   * keeps {@code keep} (what the kernel reads) until then, and closes it then. On failure {@code
   * keep} is closed here.
   */
  static DeviceResult run(GpuKernel kernel, Table input, AutoCloseable keep) {
    Table out =
        Resources.closeOnExcept(
            keep,
            k -> {
              Table t = kernel.apply(input);
              if (t == null) {
                throw new IllegalStateException(
                    kernel.name() + " returned null instead of a Table");
              }
              return t;
            });
    boolean sameAsInput = out == input;
    if (sameAsInput) {
      // The input is released with keep: the output takes its own references.
      ColumnVector[] cols = new ColumnVector[input.getNumberOfColumns()];
      for (int i = 0; i < cols.length; i++) {
        cols[i] = input.getColumn(i);
      }
      out = new Table(cols);
    }
    Cuda.Event computed = null;
    try {
      // Kernels ran on this thread's per-thread default stream: finish them here.
      Cuda.DEFAULT_STREAM.sync();
      computed = new Cuda.Event();
      computed.record(Cuda.DEFAULT_STREAM);
    } catch (RuntimeException | Error e) {
      // After a fatal CUDA error nothing is freed into the broken context.
      Closing.after(
          e,
          computed == null ? List.of(out, keep) : List.of(out, computed, keep),
          GpuHealth::isFatal);
      throw e;
    }
    return new DeviceResult(out, computed, keep, sameAsInput);
  }

  @Override
  public String doing() {
    String s = step;
    return s.equals("kernel") ? "kernel " + kernel.name() : s;
  }

  @Override
  public List<D> splitDevice(D device) {
    return input.split(device);
  }

  @Override
  public long outputBytes(DeviceResult output) {
    return output.outputBytes();
  }

  @Override
  public String outOfMemory(Throwable failure) {
    String k = "kernel " + kernel.name();
    return DeviceMemory.describe(step.equals("kernel") ? k : k + "'s " + step, -1, failure);
  }

  @Override
  public long freeDeviceBytes() {
    return DeviceMemory.freeBytes();
  }
}
