package dev.overlap.executor.gpu;

import ai.rapids.cudf.Cuda;
import dev.overlap.executor.pipeline.Upload;
import dev.overlap.executor.resource.Closing;
import java.util.List;

/**
 * An upload that keeps one copy queued ahead, for every input path that copies: it issues batch
 * {@code n}'s copies on the copy stream ({@link #copy}), which records an event after them, and
 * then waits for batch {@code n-1}'s copies (issued by the previous upload, of any task) before it
 * returns. The copy engine therefore always has the next copy queued when one finishes, and no host
 * round trip sits between two copies.
 *
 * @param <H> the packed host batch
 * @param <D> the batch on the device, whose copies can be awaited
 */
public abstract class QueuedUpload<H extends AutoCloseable, D extends Uploaded>
    implements Upload<H, D> {
  private final StreamPair streams;
  private final String what;
  // The bytes the last upload asked for; written and read on the upload thread.
  private volatile long asked = -1;

  /**
   * @param what names the upload in an out-of-memory line ("kernel q1's upload")
   */
  protected QueuedUpload(StreamPair streams, String what) {
    this.streams = streams;
    this.what = what;
  }

  /** The device bytes {@code host}'s upload allocates. */
  protected abstract long deviceBytes(H host);

  /**
   * Queues {@code host}'s copies on {@code stream} and records an event after them; the result
   * keeps a reference to {@code host} until they are done. On failure it lets {@code stream}
   * finish, then closes what it made.
   */
  protected abstract D copy(H host, Cuda.Stream stream);

  @Override
  public final D upload(H host) {
    asked = deviceBytes(host);
    D batch = copy(host, streams.copyStream());
    Uploaded previous = streams.swapLastUpload(batch);
    if (previous != null) {
      try {
        previous.awaitCopied();
      } catch (RuntimeException | Error e) {
        // The pipeline never gets this batch: close it, unless the device is broken.
        Closing.after(e, List.of(batch), GpuHealth::isFatal);
        throw e;
      }
    }
    return batch;
  }

  @Override
  public String outOfMemory(Throwable failure) {
    return DeviceMemory.describe(what, asked, failure);
  }
}
