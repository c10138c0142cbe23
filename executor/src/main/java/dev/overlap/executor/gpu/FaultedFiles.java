package dev.overlap.executor.gpu;

import java.io.Serializable;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Files the GPU must not decode, because an executor's GPU failed fatally while decoding them (an
 * illegal memory access in cuDF's reader, say): each is read on the host from then on. A file is
 * known by an identity its reader gives (the Parquet scan's: path, size and modification time, so
 * that a file written again under the same path is decoded again).
 *
 * <p>The record is per process. An executor records a fault here and sends it to the driver ({@link
 * #link}); the driver's record comes with each later scan it plans, so an executor started after
 * the fault (Spark's replacement of one that exited) reads the file on the host too. In local mode
 * the executor and the driver are one process and share it.
 */
public final class FaultedFiles {
  private static final Logger LOG = LoggerFactory.getLogger("dev.overlap");
  private static final Map<String, String> RECORD = new ConcurrentHashMap<>();
  private static volatile Consumer<Object> toDriver;
  // A fatal error is sticky: after the first, every decode running in the process fails too.
  private static final java.util.concurrent.atomic.AtomicBoolean FAULTED =
      new java.util.concurrent.atomic.AtomicBoolean();

  private FaultedFiles() {}

  /** A file whose decode failed fatally, as sent to the driver: its identity and the reason. */
  public record Fault(String file, String reason) implements Serializable {}

  /**
   * Sets where this executor sends its faults: its plugin context's {@code send}; null for none.
   */
  public static void link(Consumer<Object> send) {
    toDriver = send;
  }

  /**
   * Records that the GPU failed fatally decoding a file and tells the driver; logs one line. Only
   * the process's first such file is recorded: the error is sticky, so the decodes that run beside
   * it on other compute threads fail with it too, through no fault of their files.
   *
   * @param identity the file's identity
   * @param name the file's name, for the reason
   * @param fault the fatal error's first line
   */
  public static void faulted(String identity, String name, String fault) {
    if (!FAULTED.compareAndSet(false, true)) {
      return;
    }
    Fault f =
        new Fault(
            identity,
            name
                + ": the GPU failed fatally while decoding it ("
                + fault
                + "); it is read on the host from now on");
    if (RECORD.putIfAbsent(f.file(), f.reason()) == null) {
      LOG.error("Overlap: {}", f.reason());
    }
    Consumer<Object> send = toDriver;
    if (send != null) {
      try {
        send.accept(f);
      } catch (RuntimeException e) {
        LOG.warn("Overlap: could not tell the driver of {}", f.file(), e);
      }
    }
  }

  /** The driver's side: a fault an executor sent. */
  public static void received(Fault f) {
    if (RECORD.putIfAbsent(f.file(), f.reason()) == null) {
      LOG.warn("Overlap: {}", f.reason());
    }
  }

  /** The record as it stands, for a scan planned now. */
  public static Map<String, String> snapshot() {
    return Map.copyOf(RECORD);
  }

  /**
   * Why the file {@code identity} must not be decoded on the GPU, per {@code planned} (the driver's
   * record when its scan was planned) or this process's record; null when it may.
   */
  public static String why(String identity, Map<String, String> planned) {
    String r = planned.get(identity);
    return r != null ? r : RECORD.get(identity);
  }

  /** Forgets every record, and that a fault was seen, for tests. */
  public static void clear() {
    RECORD.clear();
    FAULTED.set(false);
  }
}
