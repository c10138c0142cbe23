package dev.overlap.executor.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.resource.BatchTracker;
import dev.overlap.executor.resource.TaskTag;
import dev.overlap.executor.testing.Latches;
import dev.overlap.executor.trace.TraceRecorder;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** One task's driver with plain Java stages, staging buffers and sources: no GPU, no Spark. */
class TaskDriverTest {
  private static final int ROWS_PER_BATCH = 3;

  /** Everything the fakes open, closed or not. */
  private final AtomicInteger open = new AtomicInteger();

  private StagePipeline pipeline;
  private BoundedPool<Buf> pool;
  private final List<TaskDriver.Figures> reported = new ArrayList<>();

  /** A staging buffer. */
  final class Buf implements AutoCloseable {
    @Override
    public void close() {}
  }

  /** A value that counts itself open until closed, and refuses a second close. */
  class Res implements AutoCloseable {
    final int first;
    private boolean closed;

    Res(int first) {
      this.first = first;
      open.incrementAndGet();
    }

    @Override
    public synchronized void close() {
      if (closed) {
        throw new IllegalStateException("closed twice");
      }
      closed = true;
      open.decrementAndGet();
    }
  }

  /** A filled batch: gives its staging buffer back when closed. */
  final class Filled extends Res implements PackedBatch {
    private final int rows;
    private final Runnable release;

    Filled(int first, int rows, Runnable release) {
      super(first);
      this.rows = rows;
      this.release = release;
    }

    @Override
    public int rows() {
      return rows;
    }

    @Override
    public long copyBytes() {
      return 8L * rows;
    }

    @Override
    public long deviceBytes() {
      return 10;
    }

    @Override
    public synchronized void close() {
      super.close();
      release.run();
    }
  }

  /** A result: its batch's row numbers. */
  class Rows extends Res implements ResultBatch<Integer> {
    Rows(int first) {
      super(first);
    }

    @Override
    public Iterator<Integer> rows() {
      return IntStream.range(first, first + ROWS_PER_BATCH).iterator();
    }
  }

  /** {@code batches} batches of numbered rows; fails instead of filling batch {@code failAt}. */
  class Numbers implements BatchSource<Buf, Filled> {
    private final int batches;
    private final int failAt;
    private int filled;

    Numbers(int batches, int failAt) {
      this.batches = batches;
      this.failAt = failAt;
    }

    @Override
    public Filled fill(Buf staging, Runnable release) {
      if (filled == failAt) {
        release.run();
        throw new IllegalArgumentException("bad input in batch " + filled);
      }
      int rows = filled < batches ? ROWS_PER_BATCH : 0;
      Filled f = new Filled(filled * ROWS_PER_BATCH, rows, release);
      filled = Math.min(filled + 1, batches);
      return f;
    }

    @Override
    public boolean more() {
      return filled < batches;
    }

    @Override
    public long rowsRead() {
      return (long) filled * ROWS_PER_BATCH;
    }
  }

  /** Stages that carry the first row number through; compute may block or fail. */
  class Passing implements BatchStages<Filled, Res, Res, Rows> {
    void beforeCompute(Res in) throws Exception {}

    @Override
    public Res upload(Filled in) {
      return new Res(in.first);
    }

    @Override
    public Res compute(Res in) throws Exception {
      beforeCompute(in);
      return new Res(in.first);
    }

    @Override
    public Rows download(Res in) {
      return new Rows(in.first);
    }
  }

  /** A value on the "device", tracked in debug mode as a DeviceBatch is. */
  final class Tracked extends Res {
    private final BatchTracker.Held held = BatchTracker.made(this);

    Tracked(int first) {
      super(first);
    }

    @Override
    public synchronized void close() {
      super.close();
      BatchTracker.closed(held);
    }
  }

  @BeforeEach
  void start() {
    pipeline = new StagePipeline(new DeviceBudget(1000), "test", null);
    pool = new BoundedPool<>(List.of(new Buf(), new Buf()));
  }

  @AfterEach
  void stop() {
    pipeline.close();
    pool.close();
  }

  private TaskDriver<Buf, Filled, Rows, Integer> driver(
      BatchSource<Buf, Filled> source, BatchStages<Filled, ?, ?, Rows> stages) {
    return new TaskDriver<>(
        pipeline, pool, stages, source, TaskTag.named("task"), 2, reported::add, Waits.NEVER);
  }

  /** Waits until the pipeline holds nothing of the task: budget, buffers and values all back. */
  private void assertAllReturned() throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while ((pipeline.budget().inFlight() > 0 || open.get() > 0 || pool.available() < 2)
        && System.nanoTime() < until) {
      Thread.sleep(5);
    }
    assertEquals(0, pipeline.budget().inFlight(), "device bytes in flight");
    assertEquals(0, open.get(), "values not closed");
    assertEquals(2, pool.available(), "staging buffers not given back");
  }

  @Test
  void returnsEveryRowInOrderAndReportsTheTaskOnce() throws InterruptedException {
    TaskDriver<Buf, Filled, Rows, Integer> d = driver(new Numbers(10, -1), new Passing());
    List<Integer> rows = new ArrayList<>();
    d.forEachRemaining(rows::add);
    assertEquals(IntStream.range(0, 30).boxed().toList(), rows);
    assertFalse(d.hasNext());
    d.finish(); // the task-completion listener, after the rows ran out
    assertAllReturned();
    assertEquals(1, reported.size());
    TaskDriver.Figures f = reported.get(0);
    assertEquals(30, f.rowsIn());
    assertEquals(30, f.rowsOut());
    assertEquals(10, f.batches());
    assertEquals(240, f.bytes());
  }

  /** Every start and end, in the order the listener heard them. */
  static final class Heard implements StageListener {
    record Event(
        boolean start, PipelineStage stage, long task, long batch, long bytes, long thread) {}

    final List<Event> events = new ArrayList<>();

    @Override
    public synchronized void stageStarted(StageRun r) {
      events.add(event(true, r));
    }

    @Override
    public synchronized void stageEnded(StageRun r, long e, boolean ok) {
      assertTrue(ok && e >= r.startNanos());
      events.add(event(false, r));
    }

    private static Event event(boolean start, StageRun r) {
      return new Event(
          start,
          r.stage(),
          r.task().taskId(),
          r.batch(),
          r.bytes(),
          Thread.currentThread().getId());
    }

    synchronized List<Event> of(long batch) {
      return events.stream().filter(e -> e.batch() == batch).toList();
    }
  }

  @Test
  void theListenerHearsEveryStageOfEveryBatchInOrderOnTheThreadThatRunsIt()
      throws InterruptedException {
    Heard heard = new Heard();
    TraceRecorder recorder = new TraceRecorder(0, 1000);
    pipeline.listener(StageListener.both(heard, recorder));
    TaskDriver<Buf, Filled, Rows, Integer> d =
        new TaskDriver<>(
            pipeline,
            pool,
            new Passing(),
            new Numbers(10, -1),
            new TaskTag(42, 7, "task"),
            2,
            reported::add,
            Waits.NEVER);
    d.forEachRemaining(r -> {});
    d.finish();
    assertAllReturned();
    PipelineStage[] order = {
      PipelineStage.PACK, PipelineStage.UPLOAD, PipelineStage.COMPUTE, PipelineStage.DOWNLOAD
    };
    long me = Thread.currentThread().getId();
    for (int b = 0; b < 10; b++) {
      List<Heard.Event> events = heard.of(b);
      assertEquals(8, events.size(), "batch " + b + ": " + events);
      for (int i = 0; i < 4; i++) {
        Heard.Event start = events.get(2 * i);
        Heard.Event end = events.get(2 * i + 1);
        assertTrue(start.start() && !end.start());
        assertEquals(order[i], start.stage());
        assertEquals(order[i], end.stage());
        assertEquals(start.thread(), end.thread(), "one thread runs a stage");
        assertEquals(42, end.task());
        assertEquals(i == 0 ? 24 : i == 1 ? 10 : 10, end.bytes());
      }
      assertEquals(me, events.get(0).thread(), "packing runs on the task's thread");
    }
    TraceRecorder.Timeline t = recorder.timeline();
    assertEquals(40, t.spans().size());
    assertEquals(4, t.tracks().size(), "one task thread and three pipeline threads");
  }

  @Test
  void anEmptyInputSubmitsNothing() throws InterruptedException {
    TaskDriver<Buf, Filled, Rows, Integer> d = driver(new Numbers(0, -1), new Passing());
    assertFalse(d.hasNext());
    assertAllReturned();
    assertEquals(0, reported.get(0).batches());
  }

  @Test
  void aSourceThatFailsMidBatchFailsTheTaskAndGivesItsBufferBack() throws InterruptedException {
    TaskDriver<Buf, Filled, Rows, Integer> d = driver(new Numbers(10, 3), new Passing());
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> {
              while (d.hasNext()) {
                d.next();
              }
            });
    assertEquals("bad input in batch 3", e.getMessage());
    assertAllReturned();
    assertEquals(1, reported.size());
  }

  @Test
  void aFailedStageFailsTheTaskWithTheStagesException() throws InterruptedException {
    IllegalStateException boom = new IllegalStateException("kernel failed");
    Passing failing =
        new Passing() {
          @Override
          void beforeCompute(Res in) {
            if (in.first == 2 * ROWS_PER_BATCH) {
              throw boom;
            }
          }
        };
    TaskDriver<Buf, Filled, Rows, Integer> d = driver(new Numbers(10, -1), failing);
    List<Integer> rows = new ArrayList<>();
    PipelineTaskException e =
        assertThrows(PipelineTaskException.class, () -> d.forEachRemaining(rows::add));
    assertSame(boom, e.getCause());
    assertEquals(IntStream.range(0, 2 * ROWS_PER_BATCH).boxed().toList(), rows);
    assertAllReturned();
    assertEquals(1, reported.size());
  }

  @Test
  void batchesQueuedAheadOfAFailedOneDeliverTheirRowsFirst() throws Exception {
    IllegalStateException boom = new IllegalStateException("kernel failed");
    CountDownLatch failed = new CountDownLatch(1);
    // Another task's download holds the download thread until this task's batch 2 has failed in
    // compute: batches 0 and 1 are then queued for download behind it.
    Passing blocker =
        new Passing() {
          @Override
          public Rows download(Res in) {
            try {
              assertTrue(failed.await(10, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
              throw new IllegalStateException(e);
            }
            return super.download(in);
          }
        };
    TaskDriver<Buf, Filled, Rows, Integer> other =
        new TaskDriver<>(
            pipeline,
            new BoundedPool<>(List.of(new Buf())),
            blocker,
            new Numbers(1, -1),
            TaskTag.named("other"),
            1,
            null,
            Waits.NEVER);
    Thread t = new Thread(() -> other.forEachRemaining(r -> {}));
    t.start();
    Passing failing =
        new Passing() {
          @Override
          void beforeCompute(Res in) {
            if (in.first == 2 * ROWS_PER_BATCH) {
              failed.countDown();
              throw boom;
            }
          }
        };
    TaskDriver<Buf, Filled, Rows, Integer> d =
        new TaskDriver<>(
            pipeline,
            new BoundedPool<>(List.of(new Buf(), new Buf(), new Buf())),
            failing,
            new Numbers(10, -1),
            TaskTag.named("task"),
            3,
            reported::add,
            Waits.NEVER);
    List<Integer> rows = new ArrayList<>();
    PipelineTaskException e =
        assertThrows(PipelineTaskException.class, () -> d.forEachRemaining(rows::add));
    t.join(10_000);
    assertSame(boom, e.getCause());
    assertEquals(IntStream.range(0, 2 * ROWS_PER_BATCH).boxed().toList(), rows);
    // Where a task goes on without the GPU: the input rows of the batches handed on whole.
    assertEquals(2 * ROWS_PER_BATCH, d.handedOnInputRows());
  }

  @Test
  void aKilledTaskDropsWhatIsInFlightAndReportsOnce() throws Exception {
    CountDownLatch computing = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Passing blocking =
        new Passing() {
          @Override
          void beforeCompute(Res in) throws InterruptedException {
            if (in.first == ROWS_PER_BATCH) {
              computing.countDown();
              release.await();
            }
          }
        };
    TaskDriver<Buf, Filled, Rows, Integer> d = driver(new Numbers(10, -1), blocking);
    for (int i = 0; i < ROWS_PER_BATCH; i++) {
      assertEquals(i, d.next());
    }
    assertTrue(computing.await(10, TimeUnit.SECONDS));
    // Spark's task-completion listener on a kill: the task's thread stops reading.
    d.finish();
    release.countDown();
    d.finish();
    assertAllReturned();
    assertEquals(1, reported.size());
    assertEquals(ROWS_PER_BATCH, reported.get(0).rowsOut());
  }

  /** Where the test's leak is: the report must name this method. */
  private static void aStageThatLeaks() {
    BatchTracker.made(new Object());
  }

  @Test
  void debugModeReportsAtTheTasksEndWhatAStageOfItsBatchesLeft() throws InterruptedException {
    List<String> report = java.util.Collections.synchronizedList(new ArrayList<>());
    BatchTracker.start(report::add);
    try {
      Passing leaking =
          new Passing() {
            @Override
            public Res upload(Filled in) {
              if (in.first == 3 * ROWS_PER_BATCH) {
                aStageThatLeaks();
              }
              return super.upload(in);
            }
          };
      TaskDriver<Buf, Filled, Rows, Integer> d = driver(new Numbers(5, -1), leaking);
      d.forEachRemaining(r -> {}); // ends with finish(), as at the task's end
      assertEquals(2, report.size(), report.toString());
      String line = report.get(0);
      assertTrue(line.startsWith("task: Object@"), line);
      assertTrue(line.contains("made on test-upload"), line);
      assertTrue(line.contains(TaskDriverTest.class.getName() + ".aStageThatLeaks("), line);
      assertEquals("task: 1 batch(es) still held at the task's end", report.get(1));
      assertAllReturned();
    } finally {
      BatchTracker.stop();
    }
  }

  @Test
  void debugModeReportsNoneOfAKilledTasksBatchesThatWereStillInFlight() throws Exception {
    List<String> report = java.util.Collections.synchronizedList(new ArrayList<>());
    BatchTracker.start(report::add);
    try {
      CountDownLatch computing = new CountDownLatch(1);
      Passing tracked =
          new Passing() {
            @Override
            public Res upload(Filled in) {
              return new Tracked(in.first);
            }

            @Override
            public Res compute(Res in) throws InterruptedException {
              if (in.first == ROWS_PER_BATCH) {
                computing.countDown();
                Thread.sleep(300);
              }
              return new Tracked(in.first);
            }
          };
      TaskDriver<Buf, Filled, Rows, Integer> d = driver(new Numbers(10, -1), tracked);
      for (int i = 0; i < ROWS_PER_BATCH; i++) {
        assertEquals(i, d.next());
      }
      assertTrue(computing.await(10, TimeUnit.SECONDS));
      // Killed while batch 1 computes and batch 2 waits for it: both are dropped, not leaked.
      d.finish();
      assertEquals(List.of(), report);
      assertAllReturned();
    } finally {
      BatchTracker.stop();
    }
  }

  @Test
  void debugModeWaitsForAKilledTasksBatchesEvenWhenItsThreadIsInterrupted() throws Exception {
    List<String> report = java.util.Collections.synchronizedList(new ArrayList<>());
    BatchTracker.start(report::add);
    try {
      CountDownLatch computing = new CountDownLatch(1);
      Passing tracked =
          new Passing() {
            @Override
            public Res upload(Filled in) {
              return new Tracked(in.first);
            }

            @Override
            public Res compute(Res in) {
              if (in.first == ROWS_PER_BATCH) {
                computing.countDown();
                // A kernel: the interrupt of the task's thread does not end it.
                long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
                while (System.nanoTime() < end) {
                  Thread.onSpinWait();
                }
              }
              return new Tracked(in.first);
            }
          };
      TaskDriver<Buf, Filled, Rows, Integer> d = driver(new Numbers(10, -1), tracked);
      for (int i = 0; i < ROWS_PER_BATCH; i++) {
        assertEquals(i, d.next());
      }
      assertTrue(computing.await(10, TimeUnit.SECONDS));
      // Spark kills the task with interruptOnCancel: its completion listener runs on the thread
      // that carries the interrupt.
      Thread.currentThread().interrupt();
      try {
        d.finish();
        assertTrue(Thread.currentThread().isInterrupted(), "the interrupt is kept");
      } finally {
        Thread.interrupted();
      }
      assertEquals(List.of(), report);
      assertAllReturned();
    } finally {
      BatchTracker.stop();
    }
  }

  @Test
  void aTaskKilledWhileItsThreadWaitsForAResultStopsWaiting() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    Passing blocking =
        new Passing() {
          @Override
          void beforeCompute(Res in) throws InterruptedException {
            release.await();
          }
        };
    java.util.concurrent.atomic.AtomicBoolean killed =
        new java.util.concurrent.atomic.AtomicBoolean();
    TaskDriver<Buf, Filled, Rows, Integer> d =
        new TaskDriver<>(
            pipeline,
            pool,
            blocking,
            new Numbers(10, -1),
            TaskTag.named("task"),
            2,
            reported::add,
            killed::get);
    java.util.concurrent.CompletableFuture<Throwable> task =
        java.util.concurrent.CompletableFuture.supplyAsync(
            () -> {
              try {
                d.hasNext();
                return null;
              } catch (Throwable t) {
                return t;
              }
            });
    Thread.sleep(300);
    assertFalse(task.isDone(), "the task waits for its first result");
    // Spark marks the task killed without interrupting its thread.
    killed.set(true);
    Throwable t = task.get(5, TimeUnit.SECONDS);
    assertTrue(t instanceof IllegalStateException, "got " + t);
    assertTrue(t.getCause() instanceof InterruptedException, "got " + t.getCause());
    release.countDown();
    assertAllReturned();
    assertEquals(1, reported.size());
  }

  @Test
  void aSourceThatThrowsBeforeTakingItsBufferDoesNotLoseIt() throws InterruptedException {
    // Like a writer whose batch cannot begin: fails before the batch owns the buffer.
    BatchSource<Buf, Filled> throwing =
        new BatchSource<>() {
          @Override
          public Filled fill(Buf staging, Runnable release) {
            throw new IllegalArgumentException("cannot begin");
          }

          @Override
          public boolean more() {
            return true;
          }

          @Override
          public long rowsRead() {
            return 0;
          }
        };
    TaskDriver<Buf, Filled, Rows, Integer> d = driver(throwing, new Passing());
    assertThrows(IllegalArgumentException.class, d::hasNext);
    assertAllReturned();
  }

  @Test
  void aSourceThatFailsAfterFillingClosesTheBatch() throws InterruptedException {
    Numbers failingMore =
        new Numbers(10, -1) {
          @Override
          public boolean more() {
            throw new IllegalStateException("input broke");
          }
        };
    TaskDriver<Buf, Filled, Rows, Integer> d = driver(failingMore, new Passing());
    assertThrows(IllegalStateException.class, d::hasNext);
    assertAllReturned();
  }

  /** Stages whose compute waits for {@code release}, whatever interrupts it. */
  private Passing computingUntil(CountDownLatch release) {
    return new Passing() {
      @Override
      void beforeCompute(Res in) {
        Latches.awaitThroughInterrupts(release);
      }
    };
  }

  @Test
  void aWaitTheCancellationEndsLeavesTheTasksThreadUninterrupted() throws Exception {
    // As when the GPU's fence ends the task's waits: nobody interrupted its thread, and the thread
    // goes on (its task's failure, the way of an executor without a GPU) without an interrupt.
    CountDownLatch release = new CountDownLatch(1);
    TaskDriver<Buf, Filled, Rows, Integer> d =
        new TaskDriver<>(
            pipeline,
            pool,
            computingUntil(release),
            new Numbers(10, -1),
            TaskTag.named("task"),
            2,
            reported::add,
            () -> true);
    try {
      IllegalStateException e = assertThrows(IllegalStateException.class, d::hasNext);
      assertTrue(e.getCause() instanceof InterruptedException, "got " + e.getCause());
      assertFalse(Thread.currentThread().isInterrupted(), "an interrupt nobody sent");
    } finally {
      Thread.interrupted();
      release.countDown();
    }
    assertAllReturned();
    assertEquals(1, reported.size());
  }

  @Test
  void anInterruptThatEndsAWaitIsSetAgain() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    TaskDriver<Buf, Filled, Rows, Integer> d = driver(new Numbers(10, -1), computingUntil(release));
    Thread.currentThread().interrupt();
    try {
      IllegalStateException e = assertThrows(IllegalStateException.class, d::hasNext);
      assertTrue(e.getCause() instanceof InterruptedException, "got " + e.getCause());
      assertTrue(Thread.currentThread().isInterrupted(), "the interrupt was lost");
    } finally {
      Thread.interrupted();
      release.countDown();
    }
    assertAllReturned();
  }

  @Test
  void aFinishFromAnotherThreadWhileTheTasksThreadReadsItsResultLeavesItOpenUntilTheReadEnds()
      throws Exception {
    CountDownLatch reading = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    List<String> misuse = java.util.Collections.synchronizedList(new ArrayList<>());
    // Batch 0's rows: the first look at them waits until the test lets it go, then checks that
    // the result is still open.
    Passing slowRows =
        new Passing() {
          @Override
          public Rows download(Res in) {
            if (in.first != 0) {
              return super.download(in);
            }
            return new Rows(0) {
              private volatile boolean shut;

              @Override
              public Iterator<Integer> rows() {
                Iterator<Integer> all = super.rows();
                return new Iterator<>() {
                  private boolean looked;

                  @Override
                  public boolean hasNext() {
                    if (!looked) {
                      looked = true;
                      reading.countDown();
                      try {
                        assertTrue(release.await(10, TimeUnit.SECONDS));
                      } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                      }
                    }
                    if (shut) {
                      misuse.add("rows read after their result was closed");
                    }
                    return all.hasNext();
                  }

                  @Override
                  public Integer next() {
                    return all.next();
                  }
                };
              }

              @Override
              public synchronized void close() {
                shut = true;
                super.close();
              }
            };
          }
        };
    TaskDriver<Buf, Filled, Rows, Integer> d = driver(new Numbers(10, -1), slowRows);
    java.util.concurrent.CompletableFuture<Boolean> first =
        java.util.concurrent.CompletableFuture.supplyAsync(d::hasNext, r -> new Thread(r).start());
    assertTrue(reading.await(10, TimeUnit.SECONDS));
    // Spark's task-completion listener, on another thread than the task's.
    d.finish();
    release.countDown();
    assertTrue(first.get(10, TimeUnit.SECONDS), "the rows read were there");
    assertEquals(List.of(), misuse);
    // The task ended with input left: the driver says so rather than that the rows ran out.
    assertThrows(IllegalStateException.class, d::hasNext);
    assertThrows(IllegalStateException.class, d::next);
    assertAllReturned();
    assertEquals(1, reported.size());
  }

  @Test
  void aFinishFromAnotherThreadEndsTheTasksWaitForAResult() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    Passing blocking =
        new Passing() {
          @Override
          void beforeCompute(Res in) throws InterruptedException {
            release.await();
          }
        };
    // Never cancelled; asked first thing by the wait for a result (no other wait asks: buffers
    // and budget are free), so it tells when the task's thread waits there.
    CountDownLatch waiting = new CountDownLatch(1);
    TaskDriver<Buf, Filled, Rows, Integer> d =
        new TaskDriver<>(
            pipeline,
            pool,
            blocking,
            new Numbers(1, -1),
            TaskTag.named("task"),
            2,
            reported::add,
            () -> {
              waiting.countDown();
              return false;
            });
    java.util.concurrent.CompletableFuture<Throwable> task =
        java.util.concurrent.CompletableFuture.supplyAsync(
            () -> {
              try {
                d.hasNext();
                return null;
              } catch (Throwable t) {
                return t;
              }
            },
            r -> new Thread(r).start());
    assertTrue(waiting.await(10, TimeUnit.SECONDS));
    d.finish(); // only the finish can end the wait
    Throwable t = task.get(10, TimeUnit.SECONDS);
    assertTrue(t instanceof PipelineTaskException, "got " + t);
    assertThrows(IllegalStateException.class, d::hasNext, "the task's end is not the input's");
    release.countDown();
    assertAllReturned();
    assertEquals(1, reported.size());
  }
}
