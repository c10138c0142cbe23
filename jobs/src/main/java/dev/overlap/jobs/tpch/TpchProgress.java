package dev.overlap.jobs.tpch;

import dev.overlap.jobs.cli.ProgressText;
import dev.overlap.jobs.cli.ProgressTicker;
import dev.overlap.jobs.cli.TerminalLine;
import java.io.PrintStream;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.apache.spark.Success$;
import org.apache.spark.scheduler.AccumulableInfo;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorMetricsUpdate;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.util.LongAccumulator;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The progress line of {@link TpchGenerate}: how many of the orders both tables are generated from
 * are done, what share that is and, from the rate so far, about how long is left. Redrawn in place
 * with a carriage return on a terminal, every 250 ms; elsewhere (a log), once every 10 %.
 */
public final class TpchProgress implements AutoCloseable {
  private final double scaleFactor;
  private final long orders;
  private final TerminalLine line;
  private final String run = UUID.randomUUID().toString();
  private final LongAdder live = new LongAdder();
  private final LongAccumulator acc;
  private final AtomicLong finished = new AtomicLong();
  private final Map<Long, Long> running = new ConcurrentHashMap<>();
  private final Set<Long> ended = ConcurrentHashMap.newKeySet();
  private final ProgressTicker ticker;
  private final boolean terminal;
  private final long start = System.nanoTime();
  private volatile String table = "lineitem";
  private volatile boolean done;
  private int lastDecile = -1;
  private String lastText = "";
  private long firstSeen = -1;
  private long firstOrders;

  /**
   * @param terminal whether {@code out} is a terminal: the line is redrawn in place, else a line is
   *     printed every 10 %
   */
  TpchProgress(
      SparkSession spark, double scaleFactor, long orders, PrintStream out, boolean terminal) {
    this.terminal = terminal;
    this.scaleFactor = scaleFactor;
    this.orders = orders;
    this.line = new TerminalLine(out, terminal, ProgressText.terminalWidth());
    acc = spark.sparkContext().longAccumulator("overlap.tpch.ordersGenerated");
    TpchOrderCounter.LIVE.put(run, live);
    long id = acc.id();
    SparkListener listener =
        new SparkListener() {
          @Override
          public void onExecutorMetricsUpdate(SparkListenerExecutorMetricsUpdate u) {
            for (var t : CollectionConverters.asJava(u.accumUpdates())) {
              Long task = (Long) t._1();
              Long v = valueOf(t._4(), id);
              // A heartbeat sent before a task ended may arrive after its end.
              if (v != null && !ended.contains(task)) {
                running.put(task, v);
              }
            }
          }

          @Override
          public void onTaskEnd(SparkListenerTaskEnd end) {
            ended.add(end.taskInfo().taskId());
            running.remove(end.taskInfo().taskId());
            Long v = valueOf(end.taskInfo().accumulables(), id);
            if (end.reason() == Success$.MODULE$ && v != null) {
              finished.addAndGet(v);
            }
          }
        };
    ticker = new ProgressTicker(spark, listener, "tpch-generate-progress", 250, this::show);
  }

  /** This task's value of the accumulator, from a task's accumulator updates. */
  private static Long valueOf(scala.collection.Seq<AccumulableInfo> infos, long id) {
    for (AccumulableInfo info : CollectionConverters.asJava(infos)) {
      if (info.id() == id && info.update().isDefined()) {
        Object v = info.update().get();
        return v instanceof Long ? (Long) v : null;
      }
    }
    return null;
  }

  TpchOrderCounter counter() {
    return new TpchOrderCounter(run, acc);
  }

  /** The table now being written. */
  void table(String name) {
    table = name;
  }

  /** Called when both tables are written: the next line is the last, at 100 %. */
  void done() {
    done = true;
  }

  /** Orders generated so far, over both tables, as executors reported them. */
  long reported() {
    long n = finished.get();
    for (long v : running.values()) {
      n += v;
    }
    return n;
  }

  /** Orders generated so far: what the executors reported, or more if counted in this JVM. */
  private long generated() {
    return Math.max(live.sum(), reported());
  }

  private synchronized void show() {
    if (done) {
      return;
    }
    long total = 2 * orders;
    long n = Math.min(generated(), total);
    long now = System.nanoTime();
    if (n > 0 && firstSeen < 0) {
      // The rate is measured from the first orders seen: not from the start, which includes
      // starting the job and the generator's setup, paid once.
      firstSeen = now;
      firstOrders = n;
    }
    int percent = (int) Math.min(99, 100 * n / Math.max(1, total));
    if (!terminal && percent / 10 == lastDecile) {
      return;
    }
    lastDecile = percent / 10;
    long tableOrders = table.equals("lineitem") ? Math.min(n, orders) : Math.max(0, n - orders);
    String text =
        ProgressText.line(
            scaleFactor,
            percent,
            table,
            tableOrders,
            orders,
            firstSeen < 0
                ? ProgressText.timeLeft(0, 0, total)
                : ProgressText.timeLeft(now - firstSeen, n - firstOrders, total - firstOrders));
    if (!text.equals(lastText)) {
      lastText = text;
      line.draw(text);
    }
  }

  @Override
  public void close() {
    ticker.close();
    TpchOrderCounter.LIVE.remove(run);
    synchronized (this) {
      long took = System.nanoTime() - start;
      line.draw(
          done
              ? String.format(
                  Locale.ROOT,
                  "generating TPC-H SF %s: 100%% (%,d orders and their line items) in %s",
                  ProgressText.format(scaleFactor),
                  orders,
                  ProgressText.duration(took))
              : String.format(
                  Locale.ROOT,
                  "generating TPC-H SF %s: stopped after %s",
                  ProgressText.format(scaleFactor),
                  ProgressText.duration(took)));
      line.end();
    }
  }
}
