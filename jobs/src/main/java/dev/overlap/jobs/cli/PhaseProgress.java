package dev.overlap.jobs.cli;

import java.io.PrintStream;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
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
 * <p>The share and the time left are those of the scan now running: the latest stage with no parent
 * stage, which reads the input. A later stage adding up a scan's results takes a fraction of the
 * time and is not counted. A phase may scan more than once (features' first pass counts exact
 * vocabularies in a second scan; a write reads its output back): the line then says which scan it
 * is. The rows are those every scan of the phase has read so far, by the kernel ({@code
 * overlap.rows.in}) or by Spark where no kernel ran, reported as each task ends.
 */
public final class PhaseProgress implements AutoCloseable {
  private static final PhaseProgress NONE = new PhaseProgress();
  private static final String ROWS_IN = "overlap.rows.in";

  /** The line being drawn now, if any: a failure or an interruption stops it ({@link #stop}). */
  private static volatile PhaseProgress drawing;

  private final String label;
  private final TerminalLine line;
  private final int width;
  private final long start = System.nanoTime();

  /** The scans' stages, in the order they started: their ids and task counts. */
  private final java.util.List<int[]> scans = new java.util.concurrent.CopyOnWriteArrayList<>();

  private final Map<Integer, AtomicLong> done = new ConcurrentHashMap<>();
  private final Map<Integer, Long> firstDone = new ConcurrentHashMap<>();
  private final AtomicLong rows = new AtomicLong();
  private final ProgressTicker ticker;

  private PhaseProgress() {
    label = null;
    line = null;
    width = 0;
    ticker = null;
  }

  /**
   * @param out a terminal: the line is redrawn in place with a carriage return
   * @param width the terminal's width, to cover a longer line drawn before
   * @param delayMillis how long the phase runs before the line is first drawn
   */
  PhaseProgress(SparkSession spark, String label, PrintStream out, int width, long delayMillis) {
    this.label = label;
    this.line = new TerminalLine(out, true, width);
    this.width = width;
    SparkListener listener =
        new SparkListener() {
          @Override
          public void onStageSubmitted(SparkListenerStageSubmitted s) {
            if (s.stageInfo().parentIds().isEmpty()) {
              done.putIfAbsent(s.stageInfo().stageId(), new AtomicLong());
              scans.add(new int[] {s.stageInfo().stageId(), s.stageInfo().numTasks()});
            }
          }

          @Override
          public void onTaskEnd(SparkListenerTaskEnd end) {
            AtomicLong stageDone = done.get(end.stageId());
            if (stageDone == null || end.reason() != Success$.MODULE$) {
              return;
            }
            long read = rowsIn(end.taskInfo().accumulables());
            if (read < 0 && end.taskMetrics() != null) {
              read = end.taskMetrics().inputMetrics().recordsRead();
            }
            rows.addAndGet(Math.max(0, read));
            if (stageDone.incrementAndGet() == 1) {
              firstDone.put(end.stageId(), System.nanoTime());
            }
          }
        };
    ticker = new ProgressTicker(spark, listener, "overlap-phase-progress", delayMillis, this::show);
    drawing = this;
  }

  /**
   * Stops drawing the line of the phase under way, if any, and erases it: before a failure's or an
   * interruption's line, which must start at the left margin and stay the last one.
   */
  public static void stop() {
    PhaseProgress p = drawing;
    if (p != null) {
      p.close();
    }
  }

  /**
   * The progress line of {@code label} on standard output when it is a terminal and Spark's own
   * stage bars are off; otherwise one that shows nothing. Close it when the phase ends.
   */
  public static PhaseProgress start(SparkSession spark, String label) {
    if (!ProgressText.stdoutIsTerminal()
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
    if (line == null) {
      return "";
    }
    long now = System.nanoTime();
    if (scans.isEmpty()) {
      return ProgressText.phaseLine(label, 0, 0, 0, "", now - start);
    }
    int[] scan = scans.get(scans.size() - 1);
    long total = scan[1];
    long n = Math.min(done.get(scan[0]).get(), total);
    Long first = firstDone.get(scan[0]);
    String name = scans.size() == 1 ? label : label + ", scan " + scans.size();
    return ProgressText.phaseLine(
        name,
        n,
        total,
        rows.get(),
        // The rate from the scan's first task's end: the time before it is its set-up and the first
        // wave of tasks, which end together.
        n < 2 || first == null
            ? ProgressText.timeLeft(0, 0, total)
            : ProgressText.timeLeft(now - first, n - 1, total - 1),
        now - start);
  }

  private synchronized void show() {
    line.draw(ProgressText.fit(text(), width));
  }

  @Override
  public void close() {
    if (ticker == null) {
      return;
    }
    if (drawing == this) {
      drawing = null;
    }
    ticker.close();
    line.erase();
  }
}
