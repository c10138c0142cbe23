package dev.overlap.executor.resource;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Debug mode ({@code spark.overlap.debug.trackBatches}) for the batches that count their references
 * by hand (packed, uploaded): records where each was made and retained, and at a task's end reports
 * those of its batches still held. A batch never closed otherwise shows only as an executor waiting
 * forever for a staging buffer or for the device budget.
 *
 * <p>A batch belongs to the task whose work made it: the task's thread while it fills a batch, or a
 * pipeline thread while it runs a stage of that task's batch (both mark it with {@link #enter}).
 * While tracking is off (the default) {@link #made} returns null and the other calls return at
 * once.
 *
 * <p>Use, in a counted batch: keep {@code made(this)} in a field; call {@link #retained} where a
 * reference is added and {@link #closed} where one is dropped, as the count itself changes.
 */
public final class BatchTracker {
  /** Frames kept of each stack trace. */
  private static final int FRAMES = 16;

  private static volatile Consumer<String> out;
  private static final ThreadLocal<TaskTag> TASK = new ThreadLocal<>();
  private static final Set<Held> LIVE = ConcurrentHashMap.newKeySet();

  private BatchTracker() {}

  /** Starts tracking batches made from now on; each line of a report goes to {@code report}. */
  public static void start(Consumer<String> report) {
    out = Objects.requireNonNull(report);
  }

  /** Stops tracking and forgets every batch. */
  public static void stop() {
    out = null;
    LIVE.clear();
  }

  public static boolean on() {
    return out != null;
  }

  /** Batches made on this thread belong to {@code task} until {@link #leave}; returns the last. */
  public static TaskTag enter(TaskTag task) {
    TaskTag before = TASK.get();
    TASK.set(task);
    return before;
  }

  /** Ends {@link #enter}, giving back what it returned. */
  public static void leave(TaskTag before) {
    if (before == null) {
      TASK.remove();
    } else {
      TASK.set(before);
    }
  }

  /** A batch made with one reference, here; null when tracking is off. */
  public static Held made(Object batch) {
    if (out == null) {
      return null;
    }
    String what =
        batch.getClass().getSimpleName()
            + "@"
            + Integer.toHexString(System.identityHashCode(batch));
    Held h = new Held(what, TASK.get());
    LIVE.add(h);
    return h;
  }

  /** A reference added, here; {@code h} may be null (not tracked). */
  public static void retained(Held h) {
    if (h != null) {
      h.retained();
    }
  }

  /** A reference dropped; the last forgets the batch. {@code h} may be null (not tracked). */
  public static void closed(Held h) {
    if (h != null && h.closed()) {
      LIVE.remove(h);
    }
  }

  /**
   * Reports {@code task}'s batches still held: one line each, with where it was made and retained,
   * then one with their count; nothing when none is. They are forgotten afterwards.
   *
   * @return how many were reported
   */
  public static int taskEnded(TaskTag task) {
    Consumer<String> report = out;
    if (report == null) {
      return 0;
    }
    List<Held> held = LIVE.stream().filter(h -> task.equals(h.task)).toList();
    for (Held h : held) {
      report.accept(task.name() + ": " + h.describe());
      LIVE.remove(h);
    }
    if (!held.isEmpty()) {
      report.accept(task.name() + ": " + held.size() + " batch(es) still held at the task's end");
    }
    return held.size();
  }

  /** One tracked batch: its task, its open references and where each was taken. */
  public static final class Held {
    private final String what;
    private final TaskTag task;
    private final List<String> sites = new ArrayList<>();
    private int refs = 1;

    private Held(String what, TaskTag task) {
      this.what = what;
      this.task = task;
      sites.add(site("made"));
    }

    private synchronized void retained() {
      refs++;
      sites.add(site("retained"));
    }

    /** True when that was the last reference. */
    private synchronized boolean closed() {
      return --refs <= 0;
    }

    private synchronized String describe() {
      return what
          + " still held, "
          + refs
          + " of its "
          + sites.size()
          + " references open; made and retained at:"
          + String.join("", sites);
    }

    private static String site(String how) {
      StringBuilder b = new StringBuilder("\n  ").append(how);
      b.append(" on ").append(Thread.currentThread().getName());
      String self = BatchTracker.class.getName();
      int kept = 0;
      for (StackTraceElement f : new Throwable().getStackTrace()) {
        String c = f.getClassName();
        boolean ours = c.equals(self) || c.startsWith(self + "$");
        if (!ours && kept++ < FRAMES) {
          b.append("\n\tat ").append(f);
        }
      }
      return b.toString();
    }
  }
}
