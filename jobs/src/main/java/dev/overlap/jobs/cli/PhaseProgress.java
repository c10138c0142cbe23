package dev.overlap.jobs.cli;

import java.io.PrintStream;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.Success$;
import org.apache.spark.scheduler.AccumulableInfo;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The progress line of one long phase of {@code etl} or {@code features} (a query, a pass over the
 * input, a write): the tasks that read the input done of those started, the rows they read, and
 * from the rate so far about how long is left. Redrawn in place on a terminal every 250 ms, from
 * the phase's first second on, and erased when the phase ends (the summary gives its time). Nothing
 * is printed when standard output is not a terminal, or when Spark draws its own stage bars there
 * ({@code spark.ui.showConsoleProgress=true}).
 *
 * <p>The tasks counted are those of stages with no parent stage: the ones that scan the input. A
 * later stage adding up their results takes a fraction of the time; counting its tasks would move
 * the share back when it starts. The rows are those the kernel read ({@code overlap.rowsIn}), or
 * Spark's own input records where no kernel ran, reported as each task ends.
 */
public final class PhaseProgress implements AutoCloseable {
  private static final PhaseProgress NONE = new PhaseProgress();
  private static final String ROWS_IN = "overlap.rowsIn";

  private final SparkSession spark;
  private final String label;
  private final PrintStream out;
  private final int width;
  private final long start = System.nanoTime();
  private final Map<Integer, Integer> scanStages = new ConcurrentHashMap<>();
  private final AtomicLong tasksDone = new AtomicLong();
  private final AtomicLong rows = new AtomicLong();
  private final SparkListener listener;
  private final ScheduledExecutorService timer;
  private volatile long firstDone = -1;
  private int lastLength;

  private PhaseProgress() {
    spark = null;
    label = null;
    out = null;
    width = 0;
    listener = null;
    timer = null;
  }

  /**
   * @param out a terminal: the line is redrawn in place with a carriage return
   * @param width the terminal's width, to cover a longer line drawn before
   * @param delayMillis how long the phase runs before the line is first drawn
   */
  PhaseProgress(SparkSession spark, String label, PrintStream out, int width, long delayMillis) {
    this.spark = spark;
    this.label = label;
    this.out = out;
    this.width = width;
    listener =
        new SparkListener() {
          @Override
          public void onStageSubmitted(SparkListenerStageSubmitted s) {
            if (s.stageInfo().parentIds().isEmpty()) {
              scanStages.put(s.stageInfo().stageId(), s.stageInfo().numTasks());
            }
          }

          @Override
          public void onTaskEnd(SparkListenerTaskEnd end) {
            if (!scanStages.containsKey(end.stageId()) || end.reason() != Success$.MODULE$) {
              return;
            }
            long read = rowsIn(end.taskInfo().accumulables());
            if (read < 0 && end.taskMetrics() != null) {
              read = end.taskMetrics().inputMetrics().recordsRead();
            }
            rows.addAndGet(Math.max(0, read));
            if (tasksDone.incrementAndGet() == 1) {
              firstDone = System.nanoTime();
            }
          }
        };
    spark.sparkContext().addSparkListener(listener);
    timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "overlap-phase-progress");
              t.setDaemon(true);
              return t;
            });
    timer.scheduleAtFixedRate(this::show, delayMillis, 250, TimeUnit.MILLISECONDS);
  }

  /**
   * The progress line of {@code label} on standard output when it is a terminal and Spark's own
   * stage bars are off; otherwise one that shows nothing. Close it when the phase ends.
   */
  public static PhaseProgress start(SparkSession spark, String label) {
    if (System.console() == null
        || spark.sparkContext().getConf().getBoolean("spark.ui.showConsoleProgress", false)) {
      return NONE;
    }
    return new PhaseProgress(spark, label, System.out, ProgressText.terminalWidth(), 1000);
  }

  /** The task's update of the kernel's rows-in accumulator; -1 when it has none. */
  private static long rowsIn(scala.collection.Seq<AccumulableInfo> infos) {
    long n = -1;
    for (AccumulableInfo info : CollectionConverters.asJava(infos)) {
      if (info.name().isDefined()
          && ROWS_IN.equals(info.name().get())
          && info.update().isDefined()
          && info.update().get() instanceof Long v) {
        n = Math.max(0, n) + v;
      }
    }
    return n;
  }

  /** The line as it would be drawn now; empty for one that shows nothing. */
  synchronized String text() {
    if (listener == null) {
      return "";
    }
    long total = 0;
    for (int n : scanStages.values()) {
      total += n;
    }
    long done = Math.min(tasksDone.get(), total);
    long now = System.nanoTime();
    return ProgressText.phaseLine(
        label,
        done,
        total,
        rows.get(),
        // The rate from the first task's end: the time before it is the phase's set-up and the
        // first wave of tasks, which finish together.
        done < 2 || firstDone < 0
            ? ProgressText.timeLeft(0, 0, total)
            : ProgressText.timeLeft(now - firstDone, done - 1, total - 1),
        now - start);
  }

  private synchronized void show() {
    String line = text();
    StringBuilder sb = new StringBuilder("\r").append(line);
    while (sb.length() - 1 < Math.max(lastLength, width - 1)) {
      sb.append(' ');
    }
    lastLength = line.length();
    out.print(sb);
    out.flush();
  }

  @Override
  public void close() {
    if (timer == null) {
      return;
    }
    timer.shutdownNow();
    try {
      timer.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    spark.sparkContext().removeSparkListener(listener);
    synchronized (this) {
      if (lastLength > 0) {
        out.print("\r" + " ".repeat(Math.max(lastLength, width - 1)) + "\r");
        out.flush();
      }
    }
  }
}
