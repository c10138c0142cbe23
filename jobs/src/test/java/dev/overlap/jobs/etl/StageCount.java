package dev.overlap.jobs.etl;

import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.sql.SparkSession;

/** The Spark jobs started and stages submitted in a session since {@link #on}, as its bus saw. */
final class StageCount extends SparkListener implements AutoCloseable {
  private final SparkSession spark;
  private final AtomicInteger jobs = new AtomicInteger();
  private final AtomicInteger stages = new AtomicInteger();

  private StageCount(SparkSession spark) {
    this.spark = spark;
  }

  static StageCount on(SparkSession spark) {
    drain(spark);
    StageCount c = new StageCount(spark);
    spark.sparkContext().addSparkListener(c);
    return c;
  }

  /** Jobs and stages so far, once the bus has delivered every event posted before this call. */
  List<Integer> jobsAndStages() {
    drain(spark);
    return List.of(jobs.get(), stages.get());
  }

  private static void drain(SparkSession spark) {
    try {
      spark.sparkContext().listenerBus().waitUntilEmpty(30_000);
    } catch (TimeoutException e) {
      throw new IllegalStateException("Spark's listener bus did not drain in 30 s", e);
    }
  }

  @Override
  public void onJobStart(SparkListenerJobStart e) {
    jobs.incrementAndGet();
  }

  @Override
  public void onStageSubmitted(SparkListenerStageSubmitted e) {
    stages.incrementAndGet();
  }

  @Override
  public void close() {
    spark.sparkContext().removeSparkListener(this);
  }
}
