package dev.overlap.executor.resource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Debug mode's record of where counted batches were taken, and its report at a task's end. */
class BatchTrackerTest {
  private static final TaskTag TASK = new TaskTag(7, 3, "task 7");
  private final List<String> report = Collections.synchronizedList(new ArrayList<>());

  /** Counts its references as HostBatch and DeviceBatch do, and tells the tracker. */
  static final class Counted implements AutoCloseable {
    private final BatchTracker.Held tracked = BatchTracker.made(this);
    private int refs = 1;

    synchronized Counted retain() {
      refs++;
      BatchTracker.retained(tracked);
      return this;
    }

    @Override
    public synchronized void close() {
      refs--;
      BatchTracker.closed(tracked);
    }
  }

  @BeforeEach
  void on() {
    BatchTracker.start(report::add);
  }

  @AfterEach
  void off() {
    BatchTracker.stop();
  }

  private static Counted madeBy(TaskTag task) {
    TaskTag before = BatchTracker.enter(task);
    try {
      return new Counted();
    } finally {
      BatchTracker.leave(before);
    }
  }

  /** Where the test's leak is: the report must name this method. */
  private static Counted aStageThatForgetsToClose(Counted c) {
    return c.retain();
  }

  @Test
  void aBatchRetainedAndNotReleasedIsReportedWithWhereItWasRetained() {
    Counted c = madeBy(TASK);
    aStageThatForgetsToClose(c);
    c.close(); // the first owner's; the stage's reference is never given back
    assertEquals(1, BatchTracker.taskEnded(TASK));
    assertEquals(2, report.size(), report.toString());
    String line = report.get(0);
    assertTrue(line.startsWith("task 7: Counted@"), line);
    assertTrue(line.contains("1 of its 2 references open"), line);
    assertTrue(line.contains("\n  made on " + Thread.currentThread().getName()), line);
    assertTrue(line.contains(BatchTrackerTest.class.getName() + ".madeBy("), line);
    assertTrue(line.contains("\n  retained on "), line);
    assertTrue(
        line.contains(BatchTrackerTest.class.getName() + ".aStageThatForgetsToClose("), line);
    assertEquals("task 7: 1 batch(es) still held at the task's end", report.get(1));
    // Reported once: the next task end of the same task says nothing more.
    assertEquals(0, BatchTracker.taskEnded(TASK));
  }

  @Test
  void noneIsReportedWhenEveryReferenceIsReleased() {
    Counted c = madeBy(TASK);
    aStageThatForgetsToClose(c).close();
    c.close();
    assertEquals(0, BatchTracker.taskEnded(TASK));
    assertEquals(List.of(), report);
  }

  @Test
  void onlyTheEndingTasksBatchesAreReported() {
    Counted other = madeBy(new TaskTag(8, 4, "task 8"));
    Counted unowned = new Counted();
    assertEquals(0, BatchTracker.taskEnded(TASK));
    assertEquals(List.of(), report);
    assertEquals(1, BatchTracker.taskEnded(new TaskTag(8, 4, "task 8")));
    other.close();
    unowned.close();
  }

  @Test
  void offTracksNothing() {
    BatchTracker.stop();
    Counted c = madeBy(TASK);
    assertNull(c.tracked);
    c.retain();
    assertEquals(0, BatchTracker.taskEnded(TASK));
    assertEquals(List.of(), report);
  }
}
