package dev.overlap.executor.compute;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.Table;
import dev.overlap.executor.resource.Closing;
import java.util.List;

/**
 * A kernel's output on the device, which the compute stream may still be producing: the output
 * table, the event recorded after the kernel's work, and what the kernel reads (the input batch, or
 * the decoded table and the chunks it came from), kept until that event so the kernel never reads
 * freed memory.
 *
 * <p>{@link #awaitComputed} blocks until the kernel's work is done. {@link #close} waits for it
 * too, so a result dropped early never frees memory a kernel is still using.
 */
public final class DeviceResult implements AutoCloseable {
  private final Table output;
  private final Cuda.Event computed;
  private final AutoCloseable input;
  private final boolean outputIsInput;
  private boolean closed;

  /**
   * Takes ownership of all three.
   *
   * @param outputIsInput the kernel returned its input: the output's memory is the input's
   */
  DeviceResult(Table output, Cuda.Event computed, AutoCloseable input, boolean outputIsInput) {
    this.output = output;
    this.computed = computed;
    this.input = input;
    this.outputIsInput = outputIsInput;
  }

  /**
   * The device memory the output adds to its input's, which the pipeline counts in its budget until
   * the download: the size of its columns' buffers, 0 when the kernel returned its input.
   */
  long outputBytes() {
    return outputIsInput ? 0 : output.getDeviceMemorySize();
  }

  /** Waits for the kernel's work on the device; the output may be read afterwards. */
  public void awaitComputed() {
    computed.sync();
  }

  /** The output; only valid to read after {@link #awaitComputed}. */
  public Table output() {
    return output;
  }

  @Override
  public synchronized void close() {
    if (closed) {
      throw new IllegalStateException("DeviceResult closed twice");
    }
    closed = true;
    List<AutoCloseable> all = List.of(output, input, computed);
    try {
      computed.sync();
    } catch (RuntimeException e) {
      throw Closing.after(e, all);
    }
    Closing.all(all);
  }
}
