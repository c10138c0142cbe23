package dev.overlap.executor.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.resource.TaskTag;
import dev.overlap.executor.testing.Latches;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The scheduling logic with plain Java stages: no GPU, no cuDF. */
class StagePipelineTest {

  /** A resource that counts how many of its kind are open and refuses a second close. */
  static class Res implements AutoCloseable {
    static final AtomicInteger OPEN = new AtomicInteger();
    final String task;
    final int value;
    private boolean closed;

    Res(String task, int value) {
      this.task = task;
      this.value = value;
      OPEN.incrementAndGet();
    }

    @Override
    public synchronized void close() {
      if (closed) {
        throw new IllegalStateException("closed twice");
      }
      closed = true;
      OPEN.decrementAndGet();
    }
  }

  /** Device memory, as far as a test can tell: freeing it needs the thread init (the device). */
  static final class OnDevice extends Res {
    static final ThreadLocal<Boolean> INIT = ThreadLocal.withInitial(() -> false);
    static final AtomicInteger OPEN = new AtomicInteger();
    static final List<String> FREED_WITHOUT_INIT = Collections.synchronizedList(new ArrayList<>());

    OnDevice(String task, int value) {
      super(task, value);
      OPEN.incrementAndGet();
    }

    @Override
    public synchronized void close() {
      if (!INIT.get()) {
        FREED_WITHOUT_INIT.add(task + value + " on " + Thread.currentThread().getName());
      }
      super.close();
      OPEN.decrementAndGet();
    }
  }

  /** Stages that add 1, 10 and 100, the first two on the "device"; a hook runs in compute. */
  static class OnDeviceStages implements BatchStages<Res, Res, Res, Res> {
    /** Counts uploads down from 3. */
    final CountDownLatch uploaded = new CountDownLatch(3);

    volatile Thread uploader;

    void computing(Res in) throws Exception {}

    @Override
    public Res upload(Res in) {
      uploader = Thread.currentThread();
      Res out = new OnDevice(in.task, in.value + 1);
      uploaded.countDown();
      return out;
    }

    @Override
    public Res compute(Res in) throws Exception {
      computing(in);
      return new OnDevice(in.task, in.value + 10);
    }

    @Override
    public Res download(Res in) {
      return new Res(in.task, in.value + 100);
    }
  }

  /** Stages that add 1, 10 and 100, with hooks a test can block or fail. */
  static class Adding implements BatchStages<Res, Res, Res, Res> {
    final List<String> events = Collections.synchronizedList(new ArrayList<>());

    void beforeUpload(Res in) throws Exception {}

    void beforeCompute(Res in) throws Exception {}

    void beforeDownload(Res in) throws Exception {}

    @Override
    public Res upload(Res in) throws Exception {
      events.add("upload-start " + in.task + in.value);
      beforeUpload(in);
      events.add("upload-end " + in.task + in.value);
      return new Res(in.task, in.value + 1);
    }

    @Override
    public Res compute(Res in) throws Exception {
      events.add("compute-start " + in.task + (in.value - 1));
      beforeCompute(in);
      events.add("compute-end " + in.task + (in.value - 1));
      return new Res(in.task, in.value + 10);
    }

    @Override
    public Res download(Res in) throws Exception {
      beforeDownload(in);
      return new Res(in.task, in.value + 100);
    }
  }

  private StagePipeline pipeline;
  private ExecutorService tasks;

  @BeforeEach
  void start() {
    Res.OPEN.set(0);
    OnDevice.OPEN.set(0);
    OnDevice.FREED_WITHOUT_INIT.clear();
    tasks = Executors.newCachedThreadPool();
  }

  @AfterEach
  void stop() throws InterruptedException {
    if (pipeline != null) {
      pipeline.close();
    }
    tasks.shutdownNow();
    assertTrue(tasks.awaitTermination(10, TimeUnit.SECONDS));
    assertEquals(0, Res.OPEN.get(), "resources left open");
  }

  private List<Integer> runTask(TaskLane<Res, Res> lane, String name, int batches)
      throws InterruptedException {
    List<Integer> out = new ArrayList<>();
    try (lane) {
      int next = 0;
      while (next < batches || lane.pending() > 0) {
        while (next < batches && !lane.full()) {
          lane.submit(new Res(name, next * 1000), 10);
          next++;
        }
        try (Res r = lane.next()) {
          out.add(r.value);
        }
      }
    }
    return out;
  }

  @Test
  void eachTaskGetsItsResultsInSubmissionOrder() throws Exception {
    pipeline = new StagePipeline(new DeviceBudget(1000), "t", null);
    Adding stages =
        new Adding() {
          @Override
          void beforeCompute(Res in) throws Exception {
            // Uneven stage times, to shake out ordering; nothing here depends on how long they are.
            Thread.sleep((in.value * 7L) % 3);
          }
        };
    List<Future<List<Integer>>> results = new ArrayList<>();
    for (String t : List.of("a", "b", "c")) {
      results.add(tasks.submit(() -> runTask(pipeline.openLane(t, stages, 3), t, 40)));
    }
    List<Integer> expected = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      expected.add(i * 1000 + 111);
    }
    for (Future<List<Integer>> f : results) {
      assertEquals(expected, f.get(30, TimeUnit.SECONDS));
    }
    assertEquals(120, pipeline.metrics().snapshot().batches());
    assertEquals(0, pipeline.budget().inFlight());
  }

  @Test
  void severalDownloadThreadsRunDifferentTasksAtOnceAndKeepEachTasksOrder() throws Exception {
    pipeline = new StagePipeline(new DeviceBudget(1000), "t", null, 2);
    assertEquals(2, pipeline.downloadThreads());
    // The first downloads of tasks a and b each wait until the other has started: with one
    // download thread they never meet (each wait times out); with two, each task has its own.
    CountDownLatch aDownloading = new CountDownLatch(1);
    CountDownLatch bDownloading = new CountDownLatch(1);
    AtomicInteger met = new AtomicInteger();
    List<String> downloadThreads = Collections.synchronizedList(new ArrayList<>());
    Adding stages =
        new Adding() {
          @Override
          void beforeCompute(Res in) throws Exception {
            // Uneven stage times, to shake out ordering; nothing here depends on how long they are.
            Thread.sleep((in.value * 7L) % 3);
          }

          @Override
          void beforeDownload(Res in) throws Exception {
            downloadThreads.add(in.task + " " + Thread.currentThread().getName());
            if (in.value == 11) {
              boolean a = in.task.equals("a");
              (a ? aDownloading : bDownloading).countDown();
              if ((a ? bDownloading : aDownloading).await(5, TimeUnit.SECONDS)) {
                met.incrementAndGet();
              }
            }
          }
        };
    TaskLane<Res, Res> a = pipeline.openLane("a", stages, 3);
    TaskLane<Res, Res> b = pipeline.openLane("b", stages, 3);
    Future<List<Integer>> fa = tasks.submit(() -> runTask(a, "a", 30));
    Future<List<Integer>> fb = tasks.submit(() -> runTask(b, "b", 30));
    List<Integer> expected = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      expected.add(i * 1000 + 111);
    }
    assertEquals(expected, fa.get(30, TimeUnit.SECONDS));
    assertEquals(expected, fb.get(30, TimeUnit.SECONDS));
    assertEquals(2, met.get(), "tasks a's and b's first downloads ran at the same time");
    // Each task stays on one download thread, and the two tasks are on different ones.
    assertEquals(
        List.of("a t-download"),
        downloadThreads.stream().filter(e -> e.startsWith("a ")).distinct().toList());
    assertEquals(
        List.of("b t-download-2"),
        downloadThreads.stream().filter(e -> e.startsWith("b ")).distinct().toList());
    assertEquals(60, pipeline.metrics().snapshot().batches());
    assertEquals(0, pipeline.budget().inFlight());
  }

  @Test
  void severalComputeThreadsRunDifferentTasksKernelsAtOnceAndKeepEachTasksOrder() throws Exception {
    pipeline =
        new StagePipeline(
            new DeviceBudget(1000),
            new StagePipeline.Threads(
                "t", null, 2, 1, StagePipeline.CLOSE_LOG_EVERY, StagePipeline.CLOSE_GIVE_UP));
    assertEquals(2, pipeline.computeThreads());
    // The first kernels of tasks a and b each wait until the other has started: with one compute
    // thread they never meet (each wait times out); with two, each task has its own.
    CountDownLatch aComputing = new CountDownLatch(1);
    CountDownLatch bComputing = new CountDownLatch(1);
    AtomicInteger met = new AtomicInteger();
    List<String> computeThreads = Collections.synchronizedList(new ArrayList<>());
    Adding stages =
        new Adding() {
          @Override
          void beforeCompute(Res in) throws Exception {
            computeThreads.add(in.task + " " + Thread.currentThread().getName());
            if (in.value == 1) {
              boolean a = in.task.equals("a");
              (a ? aComputing : bComputing).countDown();
              if ((a ? bComputing : aComputing).await(5, TimeUnit.SECONDS)) {
                met.incrementAndGet();
              }
            }
            // Uneven stage times, to shake out ordering; nothing here depends on how long they are.
            Thread.sleep((in.value * 7L) % 3);
          }
        };
    TaskLane<Res, Res> a = pipeline.openLane("a", stages, 3);
    TaskLane<Res, Res> b = pipeline.openLane("b", stages, 3);
    assertEquals(0, a.computer());
    assertEquals(1, b.computer());
    Future<List<Integer>> fa = tasks.submit(() -> runTask(a, "a", 30));
    Future<List<Integer>> fb = tasks.submit(() -> runTask(b, "b", 30));
    List<Integer> expected = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      expected.add(i * 1000 + 111);
    }
    assertEquals(expected, fa.get(30, TimeUnit.SECONDS));
    assertEquals(expected, fb.get(30, TimeUnit.SECONDS));
    assertEquals(2, met.get(), "tasks a's and b's first kernels ran at the same time");
    // Each task stays on one compute thread, and the two tasks are on different ones.
    assertEquals(
        List.of("a t-compute"),
        computeThreads.stream().filter(e -> e.startsWith("a ")).distinct().toList());
    assertEquals(
        List.of("b t-compute-2"),
        computeThreads.stream().filter(e -> e.startsWith("b ")).distinct().toList());
    // Each task's kernels ran in its order.
    for (String t : List.of("a", "b")) {
      List<String> starts =
          stages.events.stream().filter(e -> e.startsWith("compute-start " + t)).toList();
      List<String> inOrder = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        inOrder.add("compute-start " + t + (i * 1000));
      }
      assertEquals(inOrder, starts);
    }
    assertEquals(60, pipeline.metrics().snapshot().batches());
    assertEquals(0, pipeline.budget().inFlight());
  }

  @Test
  void computeThreadsMustBeAtLeastOne() {
    assertThrows(
        IllegalArgumentException.class,
        () ->
            new StagePipeline.Threads(
                "t", null, 0, 1, StagePipeline.CLOSE_LOG_EVERY, StagePipeline.CLOSE_GIVE_UP));
  }

  @Test
  void aLaneGetsTheDownloadThreadServingTheFewestOpenLanes() throws Exception {
    pipeline = new StagePipeline(new DeviceBudget(1000), "t", null, 2);
    Adding stages = new Adding();
    TaskLane<Res, Res> a = pipeline.openLane("a", stages, 3);
    TaskLane<Res, Res> b = pipeline.openLane("b", stages, 3);
    assertEquals(0, a.downloader());
    assertEquals(1, b.downloader());
    a.close();
    TaskLane<Res, Res> c = pipeline.openLane("c", stages, 3);
    assertEquals(0, c.downloader()); // not round robin: thread 1 still serves b
    TaskLane<Res, Res> d = pipeline.openLane("d", stages, 3);
    assertEquals(0, d.downloader()); // a tie goes to the first
    assertEquals(List.of(111, 1111), runTask(d, "d", 2)); // served, in order
    b.close();
    c.close();
  }

  @Test
  void twoDownloadThreadsAtOnceAreNotCountedAsOverlap() throws Exception {
    PipelineMetrics m = new PipelineMetrics();
    m.stageStarted(PipelineStage.DOWNLOAD);
    m.stageStarted(PipelineStage.DOWNLOAD);
    elapse(20);
    m.stageEnded(PipelineStage.DOWNLOAD);
    m.stageEnded(PipelineStage.DOWNLOAD);
    assertEquals(0, m.snapshot().overlapNanos());
    m.stageStarted(PipelineStage.UPLOAD);
    m.stageStarted(PipelineStage.DOWNLOAD);
    elapse(20);
    m.stageEnded(PipelineStage.DOWNLOAD);
    m.stageEnded(PipelineStage.UPLOAD);
    assertTrue(m.snapshot().overlapNanos() >= 15_000_000L, "upload beside download overlaps");
  }

  @Test
  void downloadThreadsMustBeAtLeastOne() {
    assertThrows(
        IllegalArgumentException.class,
        () -> new StagePipeline(new DeviceBudget(1000), "t", null, 0));
  }

  @Test
  void theListenerHearsEveryStageOfEveryBatchInOrder() throws Exception {
    pipeline = new StagePipeline(new DeviceBudget(1000), "t", null);
    List<String> heard = Collections.synchronizedList(new ArrayList<>());
    pipeline.listener(
        new StageListener() {
          @Override
          public void stageStarted(StageRun r) {
            heard.add(r.task().name() + r.batch() + " " + r.stage() + " start " + thread());
          }

          @Override
          public void stageEnded(StageRun r, long end, boolean ok) {
            assertTrue(ok && end >= r.startNanos() && r.bytes() == 10 && r.task().taskId() == 9);
            heard.add(r.task().name() + r.batch() + " " + r.stage() + " end " + thread());
          }

          private String thread() {
            return Thread.currentThread().getName();
          }
        });
    Adding stages = new Adding();
    List<Future<List<Integer>>> results = new ArrayList<>();
    for (String t : List.of("a", "b")) {
      results.add(
          tasks.submit(() -> runTask(pipeline.openLane(new TaskTag(9, 1, t), stages, 3), t, 20)));
    }
    for (Future<List<Integer>> f : results) {
      assertEquals(20, f.get(30, TimeUnit.SECONDS).size());
    }
    for (String t : List.of("a", "b")) {
      for (int b = 0; b < 20; b++) {
        String prefix = t + b + " ";
        List<String> mine = heard.stream().filter(e -> e.startsWith(prefix)).toList();
        List<String> expected = new ArrayList<>();
        for (String stage :
            List.of("UPLOAD t-upload", "COMPUTE t-compute", "DOWNLOAD t-download")) {
          String[] sw = stage.split(" ");
          expected.add(prefix + sw[0] + " start " + sw[1]);
          expected.add(prefix + sw[0] + " end " + sw[1]);
        }
        assertEquals(expected, mine);
      }
    }
  }

  @Test
  void aListenerThatThrowsDoesNotStopThePipeline() throws Exception {
    pipeline = new StagePipeline(new DeviceBudget(1000), "t", null);
    pipeline.listener(
        new StageListener() {
          @Override
          public void stageStarted(StageRun r) {
            throw new IllegalStateException("listener bug");
          }

          @Override
          public void stageEnded(StageRun r, long end, boolean ok) {
            throw new IllegalStateException("listener bug");
          }
        });
    assertEquals(5, runTask(pipeline.openLane("a", new Adding(), 2), "a", 5).size());
  }

  @Test
  void nextBatchUploadsWhileThePreviousOneComputes() throws Exception {
    pipeline = new StagePipeline(new DeviceBudget(1000), "t", null);
    CountDownLatch firstComputing = new CountDownLatch(1);
    CountDownLatch secondUploaded = new CountDownLatch(1);
    Adding stages =
        new Adding() {
          @Override
          void beforeCompute(Res in) throws Exception {
            // The first batch's kernel cannot finish until the second batch's copy has: the test
            // would time out if the stages ran one after the other.
            if (in.value == 1) {
              firstComputing.countDown();
              assertTrue(secondUploaded.await(10, TimeUnit.SECONDS), "no overlap");
            }
          }

          @Override
          public Res upload(Res in) throws Exception {
            if (in.value == 1000) {
              // A copy that takes 5 ms, all of it beside the first kernel.
              assertTrue(firstComputing.await(10, TimeUnit.SECONDS));
              elapse(5);
            }
            Res r = super.upload(in);
            if (in.value == 1000) {
              secondUploaded.countDown();
            }
            return r;
          }
        };
    assertEquals(List.of(111, 1111, 2111), runTask(pipeline.openLane("a", stages, 3), "a", 3));
    int uploadSecondEnd = stages.events.indexOf("upload-end a1000");
    int computeFirstEnd = stages.events.indexOf("compute-end a0");
    assertTrue(uploadSecondEnd < computeFirstEnd, stages.events.toString());
    assertTrue(pipeline.metrics().snapshot().overlapNanos() > 0, "the overlap was not counted");
  }

  @Test
  void stagesThatRunOneAfterAnotherCountNoOverlap() throws Exception {
    pipeline = new StagePipeline(new DeviceBudget(1000), "t", null);
    // One batch at a time: its stages run strictly in sequence.
    assertEquals(List.of(111, 1111), runTask(pipeline.openLane("a", new Adding(), 1), "a", 2));
    assertEquals(0, pipeline.metrics().snapshot().overlapNanos());
  }

  @Test
  void bytesInFlightNeverExceedTheBudget() throws Exception {
    DeviceBudget budget = new DeviceBudget(35); // three batches of 10 fit, a fourth does not
    pipeline = new StagePipeline(budget, "t", null);
    AtomicLong maxSeen = new AtomicLong();
    AtomicBoolean first = new AtomicBoolean(true);
    Adding stages =
        new Adding() {
          @Override
          void beforeCompute(Res in) throws Exception {
            if (first.getAndSet(false)) {
              // The first kernel runs once the budget is full: a submit waits for room.
              assertTrue(until(() -> budget.waiting() > 0), "no submit waited");
            }
            maxSeen.accumulateAndGet(budget.inFlight(), Math::max);
          }
        };
    List<Future<List<Integer>>> results = new ArrayList<>();
    for (String t : List.of("a", "b", "c", "d")) {
      results.add(tasks.submit(() -> runTask(pipeline.openLane(t, stages, 4), t, 25)));
    }
    for (Future<List<Integer>> f : results) {
      assertEquals(25, f.get(30, TimeUnit.SECONDS).size());
    }
    assertTrue(budget.peak() <= 30, "peak " + budget.peak());
    assertTrue(maxSeen.get() >= 20, "the budget was never used past one batch: " + maxSeen.get());
  }

  @Test
  void submitWaitsWhenTheBudgetIsFull() throws Exception {
    DeviceBudget budget = new DeviceBudget(20);
    pipeline = new StagePipeline(budget, "t", null);
    CountDownLatch release = new CountDownLatch(1);
    Adding stages =
        new Adding() {
          @Override
          void beforeCompute(Res in) throws Exception {
            release.await();
          }
        };
    TaskLane<Res, Res> lane = pipeline.openLane("a", stages, 8);
    lane.submit(new Res("a", 0), 10);
    lane.submit(new Res("a", 1000), 10);
    CountDownLatch thirdSubmitted = new CountDownLatch(1);
    Future<?> third =
        tasks.submit(
            () -> {
              lane.submit(new Res("a", 2000), 10);
              thirdSubmitted.countDown();
              return null;
            });
    assertFalse(thirdSubmitted.await(300, TimeUnit.MILLISECONDS), "submit did not wait");
    assertEquals(20, budget.inFlight());
    release.countDown();
    third.get(10, TimeUnit.SECONDS);
    for (int i = 0; i < 3; i++) {
      lane.next().close();
    }
    lane.close();
    assertEquals(0, budget.inFlight());
  }

  @Test
  void aBatchLargerThanTheBudgetRunsAlone() throws Exception {
    DeviceBudget budget = new DeviceBudget(5);
    pipeline = new StagePipeline(budget, "t", null);
    assertEquals(List.of(111, 1111), runTask(pipeline.openLane("a", new Adding(), 2), "a", 2));
    assertEquals(10, budget.peak());
  }

  @Test
  void aFailingStageFailsOnlyItsTaskWithTheOriginalCause() throws Exception {
    pipeline = new StagePipeline(new DeviceBudget(1000), "t", null);
    IllegalArgumentException boom = new IllegalArgumentException("bad row in batch 3");
    Adding stages =
        new Adding() {
          @Override
          void beforeCompute(Res in) {
            if (in.task.equals("bad") && in.value == 3001) {
              throw boom;
            }
          }
        };
    TaskLane<Res, Res> goodLane = pipeline.openLane("good", stages, 3);
    TaskLane<Res, Res> badLane = pipeline.openLane("bad", stages, 3);
    Future<List<Integer>> good = tasks.submit(() -> runTask(goodLane, "good", 30));
    Future<List<Integer>> bad = tasks.submit(() -> runTask(badLane, "bad", 30));
    java.util.concurrent.ExecutionException e =
        assertThrows(java.util.concurrent.ExecutionException.class, () -> bad.get(30, SECONDS));
    assertTrue(e.getCause() instanceof PipelineTaskException, e.toString());
    assertSame(boom, e.getCause().getCause());
    assertTrue(e.getCause().getMessage().contains("compute"), e.getCause().getMessage());
    assertEquals(30, good.get(30, SECONDS).size());
    awaitNothingInFlight(goodLane, badLane);
  }

  @Test
  void closingALaneMidwayReleasesEverythingWhileOtherTasksCarryOn() throws Exception {
    pipeline = new StagePipeline(new DeviceBudget(1000), "t", null);
    CountDownLatch killedHasWork = new CountDownLatch(1);
    CountDownLatch killedClosed = new CountDownLatch(1);
    Adding stages =
        new Adding() {
          @Override
          void beforeUpload(Res in) throws Exception {
            if (in.task.equals("killed")) {
              // Its batches are still in the pipeline when the task is killed.
              killedHasWork.countDown();
              assertTrue(killedClosed.await(10, SECONDS));
            }
          }
        };
    TaskLane<Res, Res> killed = pipeline.openLane("killed", stages, 6);
    for (int i = 0; i < 6; i++) {
      killed.submit(new Res("killed", i * 1000), 10);
    }
    TaskLane<Res, Res> otherLane = pipeline.openLane("other", stages, 3);
    Future<List<Integer>> other = tasks.submit(() -> runTask(otherLane, "other", 50));
    assertTrue(killedHasWork.await(10, SECONDS));
    killed.close(); // what the task-completion listener does when Spark kills the task
    killedClosed.countDown();
    assertEquals(50, other.get(30, SECONDS).size());
    // Every batch of the killed task is gone and its device bytes are back.
    awaitNothingInFlight(killed, otherLane);
    assertThrows(IllegalStateException.class, () -> killed.submit(new Res("killed", 9), 1));
  }

  @Test
  void closingThePipelineAbandonsQueuedBatches() throws Exception {
    StagePipeline p = new StagePipeline(new DeviceBudget(1000), "t", null);
    CountDownLatch block = new CountDownLatch(1);
    Adding stages =
        new Adding() {
          @Override
          void beforeUpload(Res in) throws Exception {
            block.await();
          }
        };
    TaskLane<Res, Res> lane = p.openLane("a", stages, 4);
    for (int i = 0; i < 4; i++) {
      lane.submit(new Res("a", i), 10);
    }
    p.close(); // interrupts the blocked upload; the others never start
    assertThrows(PipelineTaskException.class, lane::next);
    lane.close();
    assertEquals(0, p.budget().inFlight());
  }

  @Test
  void aResultDeliveredAfterItsLaneClosedIsClosedBeforeTheBatchCountsAsLeft() throws Exception {
    pipeline = new StagePipeline(new DeviceBudget(1000), "t", null);
    CountDownLatch downloading = new CountDownLatch(1);
    CountDownLatch laneClosed = new CountDownLatch(1);
    AtomicBoolean resultClosed = new AtomicBoolean();
    AtomicBoolean leftBeforeClosed = new AtomicBoolean();
    java.util.concurrent.atomic.AtomicReference<TaskLane<Res, Res>> theLane =
        new java.util.concurrent.atomic.AtomicReference<>();
    Adding stages =
        new Adding() {
          @Override
          void beforeDownload(Res in) throws Exception {
            downloading.countDown();
            laneClosed.await();
          }

          @Override
          public Res download(Res in) throws Exception {
            beforeDownload(in);
            return new Res(in.task, in.value + 100) {
              @Override
              public synchronized void close() {
                // While the result is being closed, its batch has not left the pipeline.
                try {
                  leftBeforeClosed.set(theLane.get().awaitLeft(0));
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
                super.close();
                resultClosed.set(true);
              }
            };
          }
        };
    TaskLane<Res, Res> lane = pipeline.openLane("a", stages, 2);
    theLane.set(lane);
    lane.submit(new Res("a", 0), 10);
    assertTrue(downloading.await(10, SECONDS));
    lane.close(); // the task was killed while its batch was on its way back
    laneClosed.countDown();
    assertTrue(lane.awaitLeft(10_000));
    assertTrue(resultClosed.get(), "the batch counted as left before its result was closed");
    assertFalse(leftBeforeClosed.get(), "the batch counted as left before its result was closed");
  }

  @Test
  void closingALaneFromAnotherThreadEndsTheWaitForItsResult() throws Exception {
    pipeline = new StagePipeline(new DeviceBudget(1000), "t", null);
    CountDownLatch computing = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Adding stages =
        new Adding() {
          @Override
          void beforeCompute(Res in) throws Exception {
            computing.countDown();
            release.await();
          }
        };
    TaskLane<Res, Res> lane = pipeline.openLane("a", stages, 2);
    lane.submit(new Res("a", 0), 10);
    assertTrue(computing.await(10, SECONDS));
    // Never cancelled: only the close can end the wait. Asked first thing by the wait, so it tells
    // when the task's thread waits.
    CountDownLatch inWait = new CountDownLatch(1);
    Future<Res> waiting =
        tasks.submit(
            () ->
                lane.next(
                    () -> {
                      inWait.countDown();
                      return false;
                    }));
    assertTrue(inWait.await(10, SECONDS));
    lane.close(); // the task's end, reported on another thread
    java.util.concurrent.ExecutionException e =
        assertThrows(java.util.concurrent.ExecutionException.class, () -> waiting.get(5, SECONDS));
    assertTrue(e.getCause() instanceof PipelineTaskException, e.toString());
    release.countDown();
    awaitNothingInFlight(lane);
  }

  /** As a stage that ends when close interrupts it: waits for the interrupt, which stays set. */
  private static void awaitInterrupt() {
    try {
      new CountDownLatch(1).await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Whether {@code condition} turned true within 10 s; checked as often as the thread can. */
  private static boolean until(java.util.function.BooleanSupplier condition) {
    long deadline = System.nanoTime() + SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.yield();
    }
    return true;
  }

  /**
   * Lets {@code millis} ms of {@link System#nanoTime}, the clock the metrics read, pass on this
   * thread: a span at least that long, whatever the scheduler does.
   */
  private static void elapse(long millis) {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    while (System.nanoTime() < end) {
      Thread.onSpinWait();
    }
  }

  /** Submits batches 0, 1000, 2000 and returns once the first is computing, the others queued. */
  private TaskLane<Res, Res> threeBatchesTheFirstComputing(
      StagePipeline p, OnDeviceStages stages, CountDownLatch computing) throws Exception {
    TaskLane<Res, Res> lane = p.openLane("a", stages, 4);
    for (int i = 0; i < 3; i++) {
      lane.submit(new Res("a", i * 1000), 10);
    }
    assertTrue(computing.await(10, SECONDS));
    // The first batch's input and the other two batches, uploaded.
    assertTrue(stages.uploaded.await(10, SECONDS));
    assertEquals(3, OnDevice.OPEN.get());
    // The upload thread handed the last one on once it waits for its next batch (it waits for
    // nothing else).
    Thread uploader = stages.uploader;
    assertTrue(until(() -> uploader.getState() == Thread.State.WAITING), uploader.getState()::name);
    return lane;
  }

  @Test
  void queuedBatchesAreFreedOnAThreadThatRanTheInit() throws Exception {
    StagePipeline p = new StagePipeline(new DeviceBudget(1000), "t", () -> OnDevice.INIT.set(true));
    CountDownLatch computing = new CountDownLatch(1);
    OnDeviceStages stages =
        new OnDeviceStages() {
          @Override
          void computing(Res in) {
            if (in.value == 1) {
              computing.countDown();
              awaitInterrupt(); // the first kernel runs until close
            }
          }
        };
    TaskLane<Res, Res> lane = threeBatchesTheFirstComputing(p, stages, computing);
    p.close();
    assertEquals(List.of(), OnDevice.FREED_WITHOUT_INIT);
    assertEquals(0, OnDevice.OPEN.get());
    lane.close();
    assertEquals(0, p.budget().inFlight());
  }

  /**
   * Counts down {@code lines} for each WARN line of the pipeline's logger that has {@code text}.
   */
  private static org.apache.logging.log4j.core.appender.AbstractAppender countLines(
      String text, CountDownLatch lines) {
    org.apache.logging.log4j.core.appender.AbstractAppender capture =
        new org.apache.logging.log4j.core.appender.AbstractAppender(
            "capture-pipeline",
            null,
            null,
            true,
            org.apache.logging.log4j.core.config.Property.EMPTY_ARRAY) {
          @Override
          public void append(org.apache.logging.log4j.core.LogEvent e) {
            if (e.getLoggerName().equals(StagePipeline.class.getName())
                && e.getLevel() == org.apache.logging.log4j.Level.WARN
                && e.getMessage().getFormattedMessage().contains(text)) {
              lines.countDown();
            }
          }
        };
    capture.start();
    org.apache.logging.log4j.core.LoggerContext ctx =
        (org.apache.logging.log4j.core.LoggerContext)
            org.apache.logging.log4j.LogManager.getContext(false);
    ctx.getConfiguration()
        .getRootLogger()
        .addAppender(capture, org.apache.logging.log4j.Level.ALL, null);
    ctx.updateLoggers();
    return capture;
  }

  private static void stopCounting(org.apache.logging.log4j.core.appender.AbstractAppender a) {
    org.apache.logging.log4j.core.LoggerContext ctx =
        (org.apache.logging.log4j.core.LoggerContext)
            org.apache.logging.log4j.LogManager.getContext(false);
    ctx.getConfiguration().getRootLogger().removeAppender(a.getName());
    ctx.updateLoggers();
    a.stop();
  }

  @Test
  void closeWaitsForAStageThatIgnoresItsInterrupt() throws Exception {
    StagePipeline p =
        new StagePipeline(
            new DeviceBudget(1000),
            new StagePipeline.Threads(
                "t",
                () -> OnDevice.INIT.set(true),
                1,
                1,
                Duration.ofMillis(50),
                Duration.ofSeconds(30)));
    CountDownLatch computing = new CountDownLatch(1);
    CountDownLatch twoLines = new CountDownLatch(2);
    AtomicBoolean computed = new AtomicBoolean();
    OnDeviceStages stages =
        new OnDeviceStages() {
          @Override
          void computing(Res in) throws InterruptedException {
            if (in.value == 1) {
              computing.countDown();
              // A kernel that runs on past several of close's log lines, its interrupt pending.
              boolean interrupted = false;
              while (true) {
                try {
                  assertTrue(twoLines.await(10, SECONDS), "close logged no waiting line");
                  break;
                } catch (InterruptedException e) {
                  interrupted = true;
                }
              }
              assertTrue(interrupted, "close did not interrupt the stage");
              Thread.currentThread().interrupt();
              computed.set(true);
            }
          }
        };
    TaskLane<Res, Res> lane = threeBatchesTheFirstComputing(p, stages, computing);
    org.apache.logging.log4j.core.appender.AbstractAppender capture =
        countLines("t-compute is still in compute of a batch 0", twoLines);
    try {
      p.close();
    } finally {
      stopCounting(capture);
    }
    assertTrue(computed.get(), "close returned while a stage was running");
    assertTrue(p.threadsEnded());
    assertEquals(0, OnDevice.OPEN.get());
    assertEquals(List.of(), OnDevice.FREED_WITHOUT_INIT);
    lane.close();
    assertEquals(0, p.budget().inFlight());
  }

  @Test
  void aStageStuckPastTheLimitKeepsWhatItMayUseUntilItEnds() throws Exception {
    StagePipeline p =
        new StagePipeline(
            new DeviceBudget(1000),
            new StagePipeline.Threads(
                "t",
                () -> OnDevice.INIT.set(true),
                1,
                1,
                Duration.ofMillis(50),
                Duration.ofMillis(300)));
    CountDownLatch computing = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    java.util.concurrent.atomic.AtomicReference<Thread> stuck =
        new java.util.concurrent.atomic.AtomicReference<>();
    OnDeviceStages stages =
        new OnDeviceStages() {
          @Override
          void computing(Res in) {
            if (in.value == 1) {
              stuck.set(Thread.currentThread());
              computing.countDown();
              Latches.awaitThroughInterrupts(release);
            }
          }
        };
    TaskLane<Res, Res> lane = threeBatchesTheFirstComputing(p, stages, computing);
    long start = System.nanoTime();
    p.close();
    assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(300));
    // close gave up: it says so, and nothing the stuck stage may use was freed under it.
    assertEquals(3, OnDevice.OPEN.get(), "freed while the compute thread was still running");
    assertFalse(p.threadsEnded());
    release.countDown();
    // Once the stage returns, its thread frees its batch and its queue itself.
    stuck.get().join(10_000);
    assertTrue(p.threadsEnded());
    assertEquals(0, OnDevice.OPEN.get());
    assertEquals(List.of(), OnDevice.FREED_WITHOUT_INIT);
    lane.close();
    assertEquals(0, p.budget().inFlight());
  }

  @Test
  void aThreadThatFailsToStartStopsTheThreadsStartedBeforeIt() {
    List<Thread> started = new ArrayList<>();
    OutOfMemoryError noThread = new OutOfMemoryError("unable to create native thread");
    // The third start fails: both download threads are running by then.
    java.util.function.Consumer<Thread> start =
        t -> {
          if (started.size() == 2) {
            throw noThread;
          }
          t.start();
          started.add(t);
        };
    OutOfMemoryError e =
        assertThrows(
            OutOfMemoryError.class,
            () ->
                new StagePipeline(
                    new DeviceBudget(1000),
                    new StagePipeline.Threads(
                        "t", null, 1, 2, Duration.ofMillis(50), Duration.ofSeconds(30)),
                    start));
    assertSame(noThread, e);
    assertEquals(
        List.of("t-download", "t-download-2"), started.stream().map(Thread::getName).toList());
    for (Thread t : started) {
      assertFalse(t.isAlive(), t.getName() + " left running");
    }
  }

  /** Waits until {@code t} is blocked on a monitor or has ended. */
  private static Thread.State blockedOrEnded(Thread t) {
    long deadline = System.nanoTime() + SECONDS.toNanos(10);
    Thread.State s = t.getState();
    while (s != Thread.State.BLOCKED
        && s != Thread.State.TERMINATED
        && System.nanoTime() < deadline) {
      Thread.onSpinWait();
      s = t.getState();
    }
    return s;
  }

  @Test
  void aSubmitRacingCloseNeverLeavesItsBatchInTheQueueOfAThreadThatEnded() throws Exception {
    StagePipeline p = new StagePipeline(new DeviceBudget(1000), "t", null);
    TaskLane<Res, Res> lane = p.openLane("a", new Adding(), 2);
    CountDownLatch admitting = new CountDownLatch(1);
    CountDownLatch go = new CountDownLatch(1);
    // The submit has found the pipeline open and not yet queued its batch when close begins.
    p.admitting(
        () -> {
          admitting.countDown();
          Latches.awaitThroughInterrupts(go);
        });
    Future<?> submitting =
        tasks.submit(
            () -> {
              lane.submit(new Res("a", 0), 10);
              return null;
            });
    assertTrue(admitting.await(10, SECONDS));
    Thread closing = new Thread(p::close, "closing");
    closing.start();
    // Either close waits for the submit (blocked), or it ran to its end with the threads gone.
    Thread.State s = blockedOrEnded(closing);
    assertTrue(s == Thread.State.BLOCKED || s == Thread.State.TERMINATED, "close is " + s);
    go.countDown();
    submitting.get(10, SECONDS);
    closing.join(10_000);
    assertFalse(closing.isAlive());
    assertTrue(p.threadsEnded());
    assertTrue(lane.awaitLeft(5_000), "the batch is in the queue of a thread that ended");
    // Queued before close marked the pipeline closed, the batch may still have run through every
    // stage before the threads stopped; otherwise it was abandoned and its result failed.
    try (Res r = lane.next()) {
      assertEquals(111, r.value);
    } catch (PipelineTaskException e) {
      assertTrue(e.getCause() instanceof IllegalStateException, e.toString());
    }
    lane.close();
    assertEquals(0, p.budget().inFlight());
  }

  @Test
  void aSubmitAfterCloseClosesItsBatchAndFailsItsResult() throws Exception {
    StagePipeline p = new StagePipeline(new DeviceBudget(1000), "t", null);
    TaskLane<Res, Res> lane = p.openLane("a", new Adding(), 2);
    p.close();
    lane.submit(new Res("a", 0), 10);
    assertEquals(0, Res.OPEN.get(), "the batch was not closed");
    assertTrue(lane.awaitLeft(0));
    assertThrows(PipelineTaskException.class, lane::next);
    lane.close();
    assertEquals(0, p.budget().inFlight());
  }

  /**
   * A closed or failed lane's queued batches are dropped when a stage thread reaches them, so the
   * budget empties shortly after the task ends, not at the same instant: once every batch of {@code
   * lanes} has left the pipeline.
   */
  @SafeVarargs
  private void awaitNothingInFlight(TaskLane<Res, Res>... lanes) throws InterruptedException {
    for (TaskLane<Res, Res> l : lanes) {
      assertTrue(l.awaitLeft(10_000), l.taskName() + "'s batches are still in the pipeline");
    }
    assertEquals(0, pipeline.budget().inFlight());
  }

  private static final TimeUnit SECONDS = TimeUnit.SECONDS;
}
