package dev.overlap.executor.trace;

import dev.overlap.executor.api.Public;
import java.nio.file.Path;
import java.util.List;

/**
 * The timeline files this JVM's executor wrote: set with {@code spark.overlap.trace.dir}, they are
 * written when the executor shuts down (in local mode, when the SparkContext stops).
 */
@Public
public final class TraceFiles {
  private static volatile List<Path> written = List.of();

  private TraceFiles() {}

  /**
   * The files written when this JVM's executor last shut down: the Chrome trace (.json, opens in
   * ui.perfetto.dev) and its drawing (.svg). Empty when tracing is off, before the executor has
   * shut down, and in a JVM with no executor (the driver of a cluster).
   */
  public static List<Path> written() {
    return written;
  }

  /** The drawing among {@link #written}, if any. */
  public static java.util.Optional<Path> svg() {
    return written.stream().filter(p -> p.toString().endsWith(".svg")).findFirst();
  }

  static void set(List<Path> files) {
    written = List.copyOf(files);
  }
}
