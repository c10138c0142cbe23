package dev.overlap.executor.spark;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/** The driver's planner warm-up: waits for the session, plans in it, gives up when told to. */
class PlannerWarmUpTest {

  @Test
  void plansInTheApplicationsSessionOnceItExists() throws Exception {
    SparkSession spark =
        SparkSession.builder()
            .master("local[1]")
            .appName("planner-warm-up")
            .config("spark.ui.enabled", "false")
            .getOrCreate();
    try {
      PlannerWarmUp w = PlannerWarmUp.start(spark.sparkContext());
      assertTrue(w.join(60_000), "the warm-up did not end within a minute");
      assertTrue(w.planned(), "the warm-up found the session but made no plan");
    } finally {
      spark.stop();
    }
  }

  @Test
  void waitsForTheSessionThenPlans() throws Exception {
    AtomicInteger asked = new AtomicInteger();
    SparkSession[] later = new SparkSession[1]; // written by this thread, read by the warm-up
    PlannerWarmUp w =
        new PlannerWarmUp(
            () -> {
              asked.incrementAndGet();
              return Optional.ofNullable(later[0]);
            },
            () -> false,
            60_000);
    Thread t = new Thread(w);
    t.start();
    while (asked.get() < 3) {
      Thread.sleep(5);
    }
    assertFalse(w.planned());
    SparkSession spark =
        SparkSession.builder()
            .master("local[1]")
            .appName("planner-warm-up-later")
            .config("spark.ui.enabled", "false")
            .getOrCreate();
    try {
      later[0] = spark;
      t.join(60_000);
      assertFalse(t.isAlive());
      assertTrue(w.planned());
    } finally {
      spark.stop();
    }
  }

  @Test
  void givesUpWhenTheContextStopsOrTheWaitRunsOut() throws Exception {
    PlannerWarmUp stopped = new PlannerWarmUp(Optional::empty, () -> true, 60_000);
    Thread a = new Thread(stopped);
    a.start();
    a.join(10_000);
    assertFalse(a.isAlive());
    assertFalse(stopped.planned());

    PlannerWarmUp timedOut = new PlannerWarmUp(Optional::empty, () -> false, 50);
    Thread b = new Thread(timedOut);
    b.start();
    b.join(10_000);
    assertFalse(b.isAlive());
    assertFalse(timedOut.planned());
  }
}
