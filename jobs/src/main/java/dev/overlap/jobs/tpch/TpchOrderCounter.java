package dev.overlap.jobs.tpch;

import java.io.Serializable;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.apache.spark.util.LongAccumulator;

/**
 * Counts the orders a generate task has generated ({@link TpchProgress}): into an accumulator,
 * which executors report with their heartbeats and at each task's end, and into {@link #LIVE} when
 * the task runs in the driver's JVM (local mode).
 */
final class TpchOrderCounter implements Serializable {
  /** Orders counted by tasks running in this JVM (local mode), per run. */
  static final Map<String, LongAdder> LIVE = new ConcurrentHashMap<>();

  private final String run;
  private final LongAccumulator orders;

  TpchOrderCounter(String run, LongAccumulator orders) {
    this.run = run;
    this.orders = orders;
  }

  void add(long n) {
    orders.add(n);
    LongAdder live = LIVE.get(run); // absent on an executor in another JVM
    if (live != null) {
      live.add(n);
    }
  }
}
