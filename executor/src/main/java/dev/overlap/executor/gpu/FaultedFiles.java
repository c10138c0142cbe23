package dev.overlap.executor.gpu;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Files the GPU must not decode, because an executor's GPU failed fatally while decoding them (an
 * illegal memory access in cuDF's reader, say): each is read on the host from then on. A file is
 * known by an identity its reader gives (the Parquet scan's: path, size and modification time, so
 * that a file written again under the same path is decoded again).
 *
 * <p>The record is per process. An executor records a fault here and tells the driver ({@link
 * #link}), waiting for its answer, so that the driver knows before the task fails and the executor
 * perhaps exits. The driver's record comes with each later scan it plans. A scan planned before the
 * fault does not carry it: a retried task asks the driver for its record ({@link #askDriver}), so
 * that the executor that runs it (Spark's replacement of one that exited, or another) reads the
 * file on the host too. In local mode the executor and the driver are one process and share it.
 */
public final class FaultedFiles {
  private static final Logger LOG = LoggerFactory.getLogger("dev.overlap");
  private static final Map<String, String> RECORD = new ConcurrentHashMap<>();
  private static volatile UnaryOperator<Object> driver;
  // A fatal error is sticky: after the first, every decode running in the process fails too.
  private static final java.util.concurrent.atomic.AtomicBoolean FAULTED =
      new java.util.concurrent.atomic.AtomicBoolean();

  private FaultedFiles() {}

  /** A file whose decode failed fatally, as sent to the driver: its identity and the reason. */
  public record Fault(String file, String reason) implements Serializable {}

  /** An executor's question to the driver: its record, answered by {@link #answer}. */
  public record RecordAsked() implements Serializable {}

  /**
   * Sets how this executor asks the driver: its plugin context's {@code ask}, which blocks until
   * the driver answers (up to {@code spark.rpc.askTimeout}) and throws when it cannot; null for no
   * driver.
   */
  public static void link(UnaryOperator<Object> ask) {
    driver = ask;
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
    UnaryOperator<Object> ask = driver;
    if (ask != null) {
      try {
        ask.apply(f);
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

  /**
   * The driver's answer to an executor's message: a fault recorded (answered with true), the record
   * asked for (a copy of it), or null for a message that is not this class's.
   */
  public static Object answer(Object message) {
    if (message instanceof Fault f) {
      received(f);
      return Boolean.TRUE;
    }
    if (message instanceof RecordAsked) {
      return new HashMap<>(RECORD);
    }
    return null;
  }

  /**
   * Asks the driver for its record and adds it to this process's: for a retried task, whose scan
   * may have been planned before a fault on another executor. Blocks until the driver answers. A
   * failed ask logs a warning and changes nothing: the task goes on with what this process knows.
   *
   * @return the files newly learned of
   */
  public static int askDriver() {
    UnaryOperator<Object> ask = driver;
    if (ask == null) {
      return 0;
    }
    Object answer;
    try {
      answer = ask.apply(new RecordAsked());
    } catch (RuntimeException e) {
      LOG.warn("Overlap: could not ask the driver which files faulted a GPU; going on without", e);
      return 0;
    }
    int learned = 0;
    if (answer instanceof Map<?, ?> m) {
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (RECORD.putIfAbsent(String.valueOf(e.getKey()), String.valueOf(e.getValue())) == null) {
          LOG.warn("Overlap: {}", e.getValue());
          learned++;
        }
      }
    }
    return learned;
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
