package dev.overlap.executor.gpu;

import ai.rapids.cudf.CudaFatalException;
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
 * the broken context, and the executor reports no GPU. A non-fatal {@code CudaException} (out of
 * memory, say) fences nothing.
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
   * Fences the GPU when {@code failure} holds a fatal CUDA error; the first fencing logs one ERROR
   * line naming the device and the error.
   *
   * @return whether {@code failure} held one
   */
  public boolean check(Throwable failure) {
    CudaFatalException fatal = fatalIn(failure);
    if (fatal == null) {
      return false;
    }
    if (error.compareAndSet(null, describe(fatal))) {
      LOG.error("Overlap: {}: {}", reason().orElseThrow(), plan, failure);
    }
    return true;
  }

  /** Whether {@code t}, its causes or what they suppressed hold a fatal CUDA error. */
  public static boolean isFatal(Throwable t) {
    return fatalIn(t) != null;
  }

  private static CudaFatalException fatalIn(Throwable t) {
    return find(t, Collections.newSetFromMap(new IdentityHashMap<>()));
  }

  private static CudaFatalException find(Throwable t, Set<Throwable> seen) {
    if (t == null || !seen.add(t)) {
      return null;
    }
    if (t instanceof CudaFatalException f) {
      return f;
    }
    for (Throwable s : t.getSuppressed()) {
      CudaFatalException f = find(s, seen);
      if (f != null) {
        return f;
      }
    }
    return find(t.getCause(), seen);
  }

  private static String describe(CudaFatalException e) {
    String m = String.valueOf(e.getMessage()).lines().findFirst().orElse("").trim();
    Object code = e.getCudaError();
    boolean named = code == null || m.contains(code.toString());
    return e.getClass().getSimpleName() + ": " + (named ? m : code + ": " + m);
  }
}
