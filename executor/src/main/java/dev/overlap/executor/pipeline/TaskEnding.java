package dev.overlap.executor.pipeline;

/**
 * When a {@link TaskDriver}'s task ends. The end may be asked for on any thread: by the task's
 * thread itself (its input ran out, it failed) or by another (Spark's task-completion listener).
 * While the task's thread is inside the driver ({@link #enter} to {@link #leave}), an end asked for
 * by another thread only runs {@code stop} at once (which must end the task's waits), and leaves
 * {@code end} (what touches the state the task's thread is using) to the task's thread as it
 * leaves. Otherwise both run at once, on the thread that asked. Each runs once.
 */
final class TaskEnding {
  private final String taskName;
  private final Runnable stop;
  private final Runnable end;
  // Guarded by this: the thread inside the driver (null when none); whether the task ended (read
  // unguarded by that thread) and its input had run out; whether end waits for that thread.
  private Thread inside;
  private volatile boolean ended;
  private boolean drained;
  private boolean endOnLeave;

  TaskEnding(String taskName, Runnable stop, Runnable end) {
    this.taskName = taskName;
    this.stop = stop;
    this.end = end;
  }

  /**
   * The task's thread enters the driver.
   *
   * @return false once the task ended after its input ran out
   * @throws IllegalStateException once it ended otherwise: before its rows were all read
   */
  synchronized boolean enter() {
    if (ended) {
      if (drained) {
        return false;
      }
      throw new IllegalStateException(taskName + ": the task ended before its rows were all read");
    }
    inside = Thread.currentThread();
    return true;
  }

  /** The task's thread leaves the driver; it runs the end if one was asked for meanwhile. */
  void leave() {
    boolean run;
    synchronized (this) {
      inside = null;
      run = endOnLeave;
      endOnLeave = false;
    }
    if (run) {
      end.run();
    }
  }

  /** Whether the end was asked for; inside the driver, by another thread. */
  boolean ended() {
    return ended;
  }

  /**
   * Ends the task (see the class comment for when and where); idempotent.
   *
   * @param inputEnded whether the task's input ran out and its rows were all read
   */
  void end(boolean inputEnded) {
    boolean later;
    synchronized (this) {
      drained |= inputEnded;
      if (ended) {
        return;
      }
      ended = true;
      later = inside != null && inside != Thread.currentThread();
      endOnLeave = later;
    }
    stop.run();
    if (!later) {
      end.run();
    }
  }
}
