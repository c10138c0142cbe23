package dev.overlap.executor.gpu;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.CudaException;
import ai.rapids.cudf.CudaFatalException;
import ai.rapids.cudf.CudfException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Device allocations that failed, as cuDF reports them, told apart from other failures so that the
 * pipeline treats them as backpressure ({@link
 * dev.overlap.executor.pipeline.BatchStages#outOfMemory}).
 *
 * <p>cuDF's JNI layer turns RMM's {@code out_of_memory} into {@link OutOfMemoryError} with the
 * message "Could not allocate native memory: ..." (RMM's pool adds "failed to allocate SIZE"); a
 * {@code bad_alloc} of another kind (a kernel's temporary memory) arrives as a {@link
 * CudfException} or {@link CudaException} naming it. A fatal CUDA error never counts: the device is
 * unusable, not full. The JVM's own heap errors do not carry that message and never count.
 */
public final class DeviceMemory {
  private static final String JNI_OOM = "Could not allocate native memory";
  private static final Pattern ASKED = Pattern.compile("failed to allocate ([^):]+)");

  private DeviceMemory() {}

  /** Whether {@code t}, or a cause of it, is a device allocation that failed. */
  public static boolean isOutOfMemory(Throwable t) {
    int depth = 0;
    for (Throwable c = t; c != null && depth < 16; c = c.getCause(), depth++) {
      if (c instanceof CudaFatalException) {
        return false;
      }
      String m = c.getMessage();
      if (m == null) {
        continue;
      }
      if (c instanceof OutOfMemoryError && m.startsWith(JNI_OOM)) {
        return true;
      }
      if ((c instanceof CudfException || c instanceof CudaException)
          && (m.contains("out_of_memory")
              || m.contains("bad_alloc")
              || m.contains("cudaErrorMemoryAllocation"))) {
        return true;
      }
    }
    return false;
  }

  /**
   * For {@link dev.overlap.executor.pipeline.BatchStages#outOfMemory}: "STEP asked for BYTES" when
   * {@code t} is a failed device allocation, else null. The bytes are {@code knownBytes} when not
   * negative, else the size RMM's message gives, else unknown.
   */
  public static String describe(String step, long knownBytes, Throwable t) {
    if (!isOutOfMemory(t)) {
      return null;
    }
    if (knownBytes >= 0) {
      return step + " asked for " + knownBytes + " bytes";
    }
    String asked = asked(t);
    return asked != null
        ? step + " asked for " + asked
        : step + " asked for an allocation of unknown size (" + oneLine(t.getMessage()) + ")";
  }

  /** The size RMM says it failed to allocate ("1.00 GiB"), or null. */
  static String asked(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c.getMessage() != null) {
        Matcher m = ASKED.matcher(c.getMessage());
        if (m.find()) {
          return m.group(1).trim();
        }
      }
      if (c.getCause() == c) {
        break;
      }
    }
    return null;
  }

  private static String oneLine(String s) {
    return s == null ? "no message" : s.replaceAll("\\s+", " ").trim();
  }

  /** The device's free memory, for the error's line; -1 when CUDA cannot say. */
  public static long freeBytes() {
    try {
      return Cuda.memGetInfo().free;
    } catch (RuntimeException | LinkageError e) {
      return -1;
    }
  }
}
