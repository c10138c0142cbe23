package dev.overlap.jobs.cli;

import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Marker;
import org.apache.logging.log4j.core.Filter;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.Logger;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.filter.AbstractFilter;
import org.apache.logging.log4j.core.impl.Log4jContextFactory;
import org.apache.logging.log4j.message.Message;
import org.apache.spark.SparkConf;

/**
 * Why the JVM is shutting down when Spark, not a signal or the job, called {@code System.exit}: a
 * task that ran out of memory (Spark's uncaught-exception handler, exit code 52) or no local folder
 * Spark could create (its disk block manager, exit code 53). Read by the shutdown hook, which then
 * says what ran out and which option or key sets it, instead of "interrupted".
 */
public final class FatalExit {
  /** The last fatal error Spark logged, with the thread it hit. */
  private static volatile Throwable fatal;

  private static volatile String fatalThread;

  private FatalExit() {}

  /** Watches the log for the fatal error that Spark logs before it exits. */
  public static void watch() {
    try {
      Set<LoggerContext> contexts = new LinkedHashSet<>();
      if (LogManager.getFactory() instanceof Log4jContextFactory f) {
        contexts.addAll(f.getSelector().getLoggerContexts());
      }
      // Spark's own loggers log through the context of Spark's class loader.
      if (LogManager.getContext(SparkConf.class.getClassLoader(), false)
          instanceof LoggerContext spark) {
        contexts.add(spark);
      }
      for (LoggerContext ctx : contexts) {
        AbstractFilter filter =
            new AbstractFilter() {
              @Override
              public Result filter(LogEvent event) {
                return seen(event.getThrown());
              }

              @Override
              public Result filter(
                  Logger logger, Level level, Marker marker, Object msg, Throwable t) {
                return seen(t);
              }

              @Override
              public Result filter(
                  Logger logger, Level level, Marker marker, Message msg, Throwable t) {
                return seen(t);
              }
            };
        filter.start();
        ctx.getConfiguration().addFilter(filter);
      }
    } catch (RuntimeException | LinkageError e) {
      // another logging back end: the shutdown hook still knows who called exit
    }
  }

  private static Filter.Result seen(Throwable t) {
    for (int depth = 0; t != null && depth < 20; depth++, t = t.getCause()) {
      if (t instanceof VirtualMachineError || t instanceof LinkageError) {
        fatal = t;
        fatalThread = Thread.currentThread().getName();
        break;
      }
    }
    return Filter.Result.NEUTRAL;
  }

  /** What called {@code System.exit}, when it was Spark rather than a signal or this job. */
  static Optional<String> caller() {
    for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
      StackTraceElement[] stack = e.getValue();
      for (int i = 0; i + 1 < stack.length; i++) {
        if (stack[i].getClassName().equals("java.lang.System")
            && stack[i].getMethodName().equals("exit")) {
          return Optional.of(stack[i + 1].getClassName());
        }
      }
    }
    return Optional.empty();
  }

  /**
   * The line for {@code where} (a task, a thread) running out of memory with {@code error}: in
   * local mode the tasks run in the driver, whose heap {@code --driver-memory} sets.
   */
  public static String outOfMemory(
      String job, String master, String where, String error, String outcome) {
    boolean local = master.startsWith("local");
    long heap = Runtime.getRuntime().maxMemory() >> 20;
    return job
        + " ran out of memory in "
        + where
        + " ("
        + error
        + "): "
        + (local
            ? "in local mode the tasks run in the driver, whose heap is "
                + heap
                + "m; give it more with --driver-memory, e.g. --driver-memory "
                + Math.max(2, 2 * ((heap + 1023) >> 10))
                + "g"
            : "give the driver more with --driver-memory")
        + "; "
        + outcome;
  }

  /**
   * The line for a shutdown Spark started, or empty for a signal. {@code master} is Spark's master,
   * {@code outcome} what the output holds now.
   */
  public static Optional<String> line(String job, String master, String outcome) {
    Optional<String> caller = caller();
    if (caller.isEmpty()) {
      return Optional.empty();
    }
    String c = caller.get();
    if (c.startsWith("org.apache.spark.storage.DiskBlockManager")) {
      return Optional.of(
          "Spark could not create any of its local folders ("
              + SparkFolders.localDirs()
              + "), where it keeps shuffle and spill files; set --conf spark.local.dir to a"
              + " writable folder with room; "
              + outcome);
    }
    if (!c.startsWith("org.apache.spark.util.SparkUncaughtExceptionHandler")
        && !c.startsWith("org.apache.spark.executor.")) {
      return Optional.empty();
    }
    Throwable t = fatal;
    String thread = fatalThread;
    String where =
        thread == null
            ? "a thread"
            : thread.startsWith("Executor task launch worker")
                ? "a task"
                : "thread '" + thread + "'";
    if (t instanceof OutOfMemoryError) {
      return Optional.of(outOfMemory(job, master, where, t.toString(), outcome));
    }
    return Optional.of(
        job
            + " stopped on a fatal error in "
            + where
            + (t == null ? "" : " (" + t + ")")
            + "; "
            + outcome);
  }
}
