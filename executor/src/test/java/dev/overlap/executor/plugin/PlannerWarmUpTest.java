package dev.overlap.executor.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.testing.LocalSession;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * The driver's planner warm-up: the plugin starts it (unless switched off), it waits for the
 * application's own session, plans in it, and gives up when told to.
 */
class PlannerWarmUpTest {

  private static SparkSession session(String app, boolean plugin, boolean warmUp) {
    if (!plugin) {
      return LocalSession.start("local[1]", app, "spark.overlap.noGpu.mode", "CPU");
    }
    return LocalSession.start(
        "local[1]",
        app,
        "spark.overlap.noGpu.mode",
        "CPU",
        "spark.plugins",
        "dev.overlap.executor.OverlapPlugin",
        "spark.overlap.driver.plannerWarmUp",
        Boolean.toString(warmUp));
  }

  @Test
  void thePluginStartsItAndItPlansInTheApplicationsSession() throws Exception {
    PlannerWarmUp.forgetLastStarted();
    SparkSession spark = session("planner-warm-up-plugin", true, true);
    try {
      PlannerWarmUp w = PlannerWarmUp.lastStarted();
      assertNotNull(w, "the driver plugin started no warm-up");
      assertEquals(PlannerWarmUp.THREAD_NAME, w.thread().getName());
      w.thread().join(60_000);
      assertFalse(w.thread().isAlive(), "the warm-up did not end within a minute");
      assertTrue(w.planned(), "the warm-up found the session but made no plan");
    } finally {
      spark.stop();
    }
  }

  @Test
  void switchedOffThePluginStartsNone() {
    PlannerWarmUp.forgetLastStarted();
    SparkSession spark = session("planner-warm-up-off", true, false);
    try {
      assertNull(PlannerWarmUp.lastStarted());
    } finally {
      spark.stop();
    }
  }

  @Test
  void aStoppedContextsSessionIsNotTaken() {
    SparkSession spark = session("planner-warm-up-stopped", false, false);
    SparkContext sc = spark.sparkContext();
    assertSame(spark, PlannerWarmUp.sessionOf(sc).orElseThrow());
    spark.stop();
    assertTrue(PlannerWarmUp.sessionOf(sc).isEmpty());
  }

  @Test
  void waitsForTheSessionThenPlans() throws Exception {
    AtomicInteger asked = new AtomicInteger();
    AtomicReference<SparkSession> later = new AtomicReference<>();
    PlannerWarmUp w =
        new PlannerWarmUp(
            () -> {
              asked.incrementAndGet();
              return Optional.ofNullable(later.get());
            },
            () -> false,
            60_000);
    w.thread().start();
    while (asked.get() < 3) {
      Thread.sleep(5);
    }
    assertFalse(w.planned());
    SparkSession spark = session("planner-warm-up-later", false, false);
    try {
      later.set(spark);
      w.thread().join(60_000);
      assertFalse(w.thread().isAlive());
      assertTrue(w.planned());
    } finally {
      spark.stop();
    }
  }

  @Test
  void givesUpWhenStoppedWhenTheContextStopsOrWhenTheWaitRunsOut() throws Exception {
    PlannerWarmUp interrupted = new PlannerWarmUp(Optional::empty, () -> false, 60_000);
    interrupted.thread().start();
    interrupted.stop(10_000);
    assertFalse(interrupted.thread().isAlive(), "stop() left the waiting thread running");
    assertFalse(interrupted.planned());

    PlannerWarmUp stopped = new PlannerWarmUp(Optional::empty, () -> true, 60_000);
    stopped.thread().start();
    stopped.thread().join(10_000);
    assertFalse(stopped.thread().isAlive());
    assertFalse(stopped.planned());

    PlannerWarmUp timedOut = new PlannerWarmUp(Optional::empty, () -> false, 50);
    timedOut.thread().start();
    timedOut.thread().join(10_000);
    assertFalse(timedOut.thread().isAlive());
    assertFalse(timedOut.planned());
  }
}
