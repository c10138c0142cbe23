package dev.overlap.jobs.cli;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.sql.SparkSession;

/**
 * What keeps a progress line current ({@link PhaseProgress}, {@code TpchProgress}): the Spark
 * listener that counts what the line shows, and one daemon thread that redraws it every 250 ms.
 * {@link #close} stops the thread, waiting for a redraw under way, then removes the listener.
 */
public final class ProgressTicker implements AutoCloseable {
  private final SparkSession spark;
  private final SparkListener listener;
  private final ScheduledExecutorService timer;

  /**
   * Adds {@code listener} to {@code spark}'s, then runs {@code redraw} every 250 ms from {@code
   * delayMillis} on, on a daemon thread named {@code name}.
   */
  public ProgressTicker(
      SparkSession spark, SparkListener listener, String name, long delayMillis, Runnable redraw) {
    this.spark = spark;
    this.listener = listener;
    spark.sparkContext().addSparkListener(listener);
    timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, name);
              t.setDaemon(true);
              return t;
            });
    timer.scheduleAtFixedRate(redraw, delayMillis, 250, TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    timer.shutdownNow();
    try {
      timer.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    spark.sparkContext().removeSparkListener(listener);
  }
}
