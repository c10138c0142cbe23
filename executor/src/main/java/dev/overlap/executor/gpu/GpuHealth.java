package dev.overlap.executor.gpu;

import ai.rapids.cudf.CudaFatalException;
import dev.overlap.executor.pipeline.StageStallException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the executor's GPU still works. A fatal CUDA error (cuDF's {@link CudaFatalException}: an
 * illegal address, a launch failure, an uncorrectable ECC error) leaves the process's CUDA context
 * unusable until it ends; the first one seen <em>fences</em> the GPU, for good. From then on no
 * stage runs on it ({@link FencedStages}), what it holds is left allocated rather than freed into
 * the broken context, and the executor reports no GPU. A stage that runs past the stall timeout
 * fences it too ({@link #stalled}). A non-fatal {@code CudaException} (out of memory, say) fences
 * nothing.
 *
 * <p>Thread-safe: the pipeline's threads fence it, task threads and the executor plugin read it.
 */
public final class GpuHealth {
  private static final Logger LOG = LoggerFactory.getLogger("dev.overlap");

  private final int device;
  private final String plan;
  private final AtomicReference<String> error = new AtomicReference<>();

  /**
   * @param plan what follows a fatal error, in words: ends the log line and the failed tasks'
   *     message
   */
  public GpuHealth(int device, String plan) {
    this.device = device;
    this.plan = plan;
  }

  public int device() {
    return device;
  }

  public boolean fenced() {
    return error.get() != null;
  }

  /** Why the GPU is not used, once fenced: {@code GPU 0 failed: <error>; fenced}. */
  public Optional<String> reason() {
    String e = error.get();
    return e == null
        ? Optional.empty()
        : Optional.of("GPU " + device + " failed: " + e + "; fenced");
  }

  /** What a task that meets the fenced GPU fails with: the reason and what follows. */
  public String message() {
    return reason().orElse("GPU " + device + " works") + ": " + plan;
  }

  /** Throws {@link GpuFencedException} once the GPU is fenced. */
  public void ensureUsable() {
    if (fenced()) {
      throw new GpuFencedException(message(), null);
    }
  }

  /**
   * Fences the GPU when {@code failure} holds a fatal CUDA error, or a stage that stalled ({@link
   * #stalled}); the first fencing logs one ERROR line naming the device and the error.
   *
   * @return whether {@code failure} held one
   */
  public boolean check(Throwable failure) {
    CudaFatalException fatal = find(failure, CudaFatalException.class);
    if (fatal == null) {
      StageStallException stall = find(failure, StageStallException.class);
      if (stall == null) {
        return false;
      }
      stalled(stall);
    } else if (error.compareAndSet(null, describe(fatal))) {
      LOG.error("Overlap: {}: {}", reason().orElseThrow(), plan, failure);
    }
    return true;
  }

  /**
   * Fences the GPU after a stage ran past {@code spark.overlap.gpu.stallTimeout}: the call that
   * does not return cannot be interrupted, and work queued behind it on the device may never run,
   * so the GPU is not trusted with more. The first fencing logs one ERROR line, as for a fatal
   * error. The pipeline's stall watch calls it; so does {@link #check} on the stalled task's
   * failure, should that come first.
   */
  public void stalled(StageStallException stall) {
    if (error.compareAndSet(null, stall.getClass().getSimpleName() + ": " + stall.getMessage())) {
      LOG.error("Overlap: {}: {}", reason().orElseThrow(), plan);
    }
  }

  /** Whether {@code t}, its causes or what they suppressed hold a fatal CUDA error. */
  public static boolean isFatal(Throwable t) {
    return find(t, CudaFatalException.class) != null;
  }

  /** The first {@code type} in {@code t}, its causes and what they suppressed; null when none. */
  private static <E extends Throwable> E find(Throwable t, Class<E> type) {
    return find(t, type, Collections.newSetFromMap(new IdentityHashMap<>()));
  }

  private static <E extends Throwable> E find(Throwable t, Class<E> type, Set<Throwable> seen) {
    if (t == null || !seen.add(t)) {
      return null;
    }
    if (type.isInstance(t)) {
      return type.cast(t);
    }
    for (Throwable s : t.getSuppressed()) {
      E f = find(s, type, seen);
      if (f != null) {
        return f;
      }
    }
    return find(t.getCause(), type, seen);
  }

  private static String describe(CudaFatalException e) {
    String m = String.valueOf(e.getMessage()).lines().findFirst().orElse("").trim();
    Object code = e.getCudaError();
    boolean named = code == null || m.contains(code.toString());
    return e.getClass().getSimpleName() + ": " + (named ? m : code + ": " + m);
  }
}
