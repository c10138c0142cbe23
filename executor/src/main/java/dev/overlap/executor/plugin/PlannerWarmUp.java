package dev.overlap.executor.plugin;

import dev.overlap.executor.trace.Diagnostics;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;

/**
 * Plans one small aggregation in the application's Spark session on a background thread of the
 * driver, as soon as that session exists ({@code spark.overlap.driver.plannerWarmUp}).
 *
 * <p>A JVM's first query plan loads Spark's analyzer, optimizer and planner, and beside the RAPIDS
 * Accelerator its rules (its {@code GpuOverrides}, initialized by the first plan under adaptive
 * execution or the first cache): several hundred ms that a job otherwise pays inside its first
 * queries' plans, one after the other. Here they are paid while the job lists and reads its input.
 * Nothing runs: the plan is made and dropped, so no job, no SQL execution and no listener event
 * comes of it. Whatever it has not finished when the job's own plan needs the same classes, the job
 * waits for rather than repeats (the JVM initializes a class once).
 */
public final class PlannerWarmUp implements Runnable {
  /** Its lines go to the run's log only (conf/log4j2.properties), not to the terminal. */
  private static final Logger LOG = Diagnostics.logger(PlannerWarmUp.class);

  static final String THREAD_NAME = "overlap-planner-warm-up";

  /** How often the thread looks for the session. */
  private static final long POLL_MILLIS = 10;

  /** How long it looks for the session at most. */
  private static final long WAIT_MILLIS = 120_000;

  private static final AtomicReference<PlannerWarmUp> LAST_STARTED = new AtomicReference<>();

  private final Supplier<Optional<SparkSession>> session;
  private final BooleanSupplier stopped;
  private final long waitMillis;
  private final Thread thread;
  private volatile boolean planned;

  /**
   * A warm-up, not started: it plans in the session {@code session} gives once there is one, and
   * gives up when {@code stopped} says so or after {@code waitMillis} without one.
   */
  PlannerWarmUp(
      Supplier<Optional<SparkSession>> session, BooleanSupplier stopped, long waitMillis) {
    this.session = session;
    this.stopped = stopped;
    this.waitMillis = waitMillis;
    this.thread = new Thread(this, THREAD_NAME);
    thread.setDaemon(true);
  }

  /**
   * Starts the warm-up for {@code sc}'s application on a daemon thread: it plans in the default
   * session once there is one on {@code sc}, and gives up when {@code sc} stops or after two
   * minutes without one.
   */
  static PlannerWarmUp start(SparkContext sc) {
    PlannerWarmUp w = new PlannerWarmUp(() -> sessionOf(sc), sc::isStopped, WAIT_MILLIS);
    LAST_STARTED.set(w);
    w.thread.start();
    return w;
  }

  /** The warm-up {@link #start} started last in this JVM, null when none: for tests. */
  static PlannerWarmUp lastStarted() {
    return LAST_STARTED.get();
  }

  /** Forgets the last started warm-up: for tests. */
  static void forgetLastStarted() {
    LAST_STARTED.set(null);
  }

  /**
   * The default session when it runs on {@code sc}: one an earlier context left is not {@code
   * sc}'s.
   */
  static Optional<SparkSession> sessionOf(SparkContext sc) {
    SparkSession s = SparkSession.getDefaultSession().getOrElse(() -> null);
    return s != null && s.sparkContext() == sc && !sc.isStopped()
        ? Optional.of(s)
        : Optional.empty();
  }

  /** The thread it runs on (started by {@link #start}). */
  Thread thread() {
    return thread;
  }

  /** Whether the plan was made. */
  boolean planned() {
    return planned;
  }

  /**
   * Stops waiting for the session, and waits at most {@code millis} for a plan under way to end
   * (with the context stopping, it fails at once).
   */
  void stop(long millis) {
    thread.interrupt();
    try {
      thread.join(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void run() {
    long deadline = System.nanoTime() + waitMillis * 1_000_000;
    try {
      Optional<SparkSession> s = session.get();
      while (s.isEmpty()) {
        if (stopped.getAsBoolean() || System.nanoTime() > deadline) {
          return;
        }
        Thread.sleep(POLL_MILLIS);
        s = session.get();
      }
      if (stopped.getAsBoolean() || Thread.currentThread().isInterrupted()) {
        return;
      }
      long t = System.nanoTime();
      plan(s.get());
      planned = true;
      LOG.info("Spark's planner warmed up in {} ms", (System.nanoTime() - t) / 1_000_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception | Error e) {
      // A plan that fails here fails in the job too, with its own message; nothing is lost. One
      // that fails because the application stopped meanwhile is not worth a line.
      if (!stopped.getAsBoolean() && !Thread.currentThread().isInterrupted()) {
        LOG.info("the planner's warm-up stopped: {}", e.toString());
      }
    }
  }

  /**
   * Plans, without running it, an aggregation over a filter and a cast: the analyzer, the
   * optimizer, the aggregation and exchange strategies, adaptive execution's preparations (where
   * RAPIDS' rules first run).
   */
  static void plan(SparkSession spark) {
    var ds =
        (org.apache.spark.sql.classic.Dataset<Row>)
            spark
                .range(1)
                .selectExpr("id % 2 as k", "cast(id as double) as v")
                .where("v >= 0")
                .groupBy("k")
                .sum("v");
    ds.queryExecution().executedPlan();
  }
}
