package dev.overlap.executor.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.testing.Latches;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A stage that does not end, with plain Java stages: the stall watch fails its task. */
class StallWatchTest {
  private static final Duration STALL = Duration.ofMillis(300);
  private static final String BOUND = "spark.overlap.gpu.stallTimeout=300ms";

  /** A value in flight, counted open until closed. */
  static final class Val implements AutoCloseable {
    static final AtomicInteger OPEN = new AtomicInteger();
    final int n;
    private boolean closed;

    Val(int n) {
      this.n = n;
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

  /**
   * Stages that add 1, 10 and 100; the host batch {@code n} reads "file part-n.parquet". The stage
   * {@code stuck} of the batch whose host value is {@code stuckAt} waits for {@link #release}
   * through interrupts, as a native call that does not return.
   */
  static final class Stages implements BatchStages<Val, Val, Val, Val> {
    final PipelineStage stuck;
    final int stuckAt;
    final CountDownLatch entered = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);

    Stages(PipelineStage stuck, int stuckAt) {
      this.stuck = stuck;
      this.stuckAt = stuckAt;
    }

    private void maybeStick(PipelineStage stage, int host) {
      if (stage == stuck && host == stuckAt) {
        entered.countDown();
        Latches.awaitThroughInterrupts(release);
      }
    }

    @Override
    public Val upload(Val in) {
      maybeStick(PipelineStage.UPLOAD, in.n);
      return new Val(in.n + 1);
    }

    @Override
    public Val compute(Val in) {
      maybeStick(PipelineStage.COMPUTE, in.n - 1);
      return new Val(in.n + 10);
    }

    @Override
    public Val download(Val in) {
      maybeStick(PipelineStage.DOWNLOAD, in.n - 11);
      return new Val(in.n + 100);
    }

    @Override
    public String describe(Val host) {
      return "file part-" + host.n + ".parquet";
    }

    @Override
    public String doing(PipelineStage stage) {
      return stage == PipelineStage.COMPUTE ? "kernel k" : null;
    }
  }

  private final List<StageStallException> told = Collections.synchronizedList(new ArrayList<>());
  private final CountDownLatch stalled = new CountDownLatch(1);
  private StagePipeline pipeline;

  @BeforeEach
  void start() {
    Val.OPEN.set(0);
    pipeline =
        new StagePipeline(
            new DeviceBudget(1000),
            new StagePipeline.Threads(
                "t", null, 1, 1, Duration.ofMillis(50), Duration.ofSeconds(10)));
    pipeline.watchStalls(
        STALL,
        BOUND,
        s -> {
          told.add(s);
          stalled.countDown();
        });
  }

  @AfterEach
  void stop() {
    if (!pipeline.threadsEnded()) {
      pipeline.close();
    }
    assertTrue(pipeline.threadsEnded());
    assertEquals(0, Val.OPEN.get(), "values left open");
  }

  private static TaskLane<Val, Val> submitted(StagePipeline p, Stages stages, int batches)
      throws InterruptedException {
    TaskLane<Val, Val> lane = p.openLane("task 7", stages, batches);
    for (int i = 0; i < batches; i++) {
      lane.submit(new Val(i), 10);
    }
    return lane;
  }

  /** The milliseconds the line says the stage ran, when it is the stall's line of {@code shape}. */
  private static long ranMillis(String line, String shape) {
    Matcher m = Pattern.compile(shape).matcher(line);
    assertTrue(m.matches(), line);
    return Long.parseLong(m.group(1));
  }

  @Test
  void aKernelThatNeverReturnsFailsItsTaskWithOneLineNamingTheStageTheBatchAndItsFile()
      throws Exception {
    Stages stages = new Stages(PipelineStage.COMPUTE, 1);
    TaskLane<Val, Val> lane = submitted(pipeline, stages, 3);
    try (Val first = lane.next()) {
      assertEquals(111, first.n);
    }
    assertTrue(stages.entered.await(10, TimeUnit.SECONDS));
    // Without the watch, the wait would end only here, with WaitCancelledException.
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);

    PipelineTaskException e =
        assertThrows(
            PipelineTaskException.class, () -> lane.next(() -> System.nanoTime() > giveUp));

    StageStallException stall = assertInstanceOf(StageStallException.class, e.getCause());
    long ran =
        ranMillis(
            e.getMessage(),
            "task 7: batch 1 \\(file part-1\\.parquet\\) stalled in compute \\(kernel k\\): no end"
                + " after (\\d+) ms, past spark\\.overlap\\.gpu\\.stallTimeout=300ms");
    assertTrue(ran >= STALL.toMillis(), e.getMessage());
    assertTrue(stalled.await(10, TimeUnit.SECONDS), "the handler never heard of the stall");
    assertEquals(List.of(stall), told, "the handler hears of the stall once");
    // The stage still runs: what it holds is not freed under it.
    assertTrue(Val.OPEN.get() > 0);
    stages.release.countDown();
    assertTrue(lane.awaitLeft(10_000), "the stalled batch never left once its stage returned");
    assertEquals(0, Val.OPEN.get());
    assertEquals(0, pipeline.budget().inFlight());
    assertEquals(List.of(stall), told);
  }

  @Test
  void aResultThatComesBackAfterItsStallIsClosedAndTheTaskStillFails() throws Exception {
    Stages stages = new Stages(PipelineStage.DOWNLOAD, 0);
    TaskLane<Val, Val> lane = submitted(pipeline, stages, 2);
    // The task has not asked for the result yet when the download stalls, nor when it returns.
    assertTrue(stalled.await(10, TimeUnit.SECONDS));
    stages.release.countDown();
    assertTrue(lane.awaitLeft(10_000));
    assertEquals(0, Val.OPEN.get(), "the late result was kept in a slot that had failed");

    PipelineTaskException e = assertThrows(PipelineTaskException.class, lane::next);
    assertSame(told.get(0), e.getCause());
    ranMillis(
        e.getMessage(),
        "task 7: batch 0 \\(file part-0\\.parquet\\) stalled in copy to host: no end after (\\d+)"
            + " ms, past spark\\.overlap\\.gpu\\.stallTimeout=300ms");
    lane.close();
    assertEquals(0, pipeline.budget().inFlight());
  }

  @Test
  void stagesThatEndInTimeAreNoStall() throws Exception {
    Stages stages = new Stages(PipelineStage.COMPUTE, -1);
    TaskLane<Val, Val> lane = submitted(pipeline, stages, 20);
    for (int i = 0; i < 20; i++) {
      try (Val r = lane.next()) {
        assertEquals(i + 111, r.n);
      }
    }
    lane.close();
    assertEquals(List.of(), told);
  }

  private static Thread watchThread() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals("t-stall-watch"))
        .findFirst()
        .orElse(null);
  }

  @Test
  void closingThePipelineEndsItsWatchAndASecondWatchIsRefused() {
    Thread watch = watchThread();
    assertTrue(watch != null && watch.isAlive(), "no watch thread");
    assertThrows(IllegalStateException.class, () -> pipeline.watchStalls(STALL, BOUND, told::add));

    pipeline.close();

    assertFalse(watch.isAlive(), "the watch outlived its pipeline");
    assertThrows(IllegalStateException.class, () -> pipeline.watchStalls(STALL, BOUND, told::add));
  }
}
