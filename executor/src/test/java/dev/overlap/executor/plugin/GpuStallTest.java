package dev.overlap.executor.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.config.GpuKeys;
import dev.overlap.executor.config.OnFatalError;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.gpu.FencedStages;
import dev.overlap.executor.gpu.GpuFencedException;
import dev.overlap.executor.gpu.GpuHealth;
import dev.overlap.executor.pipeline.BatchStages;
import dev.overlap.executor.pipeline.BoundedPool;
import dev.overlap.executor.pipeline.DeviceBudget;
import dev.overlap.executor.pipeline.StagePipeline;
import dev.overlap.executor.pipeline.TaskDriver;
import dev.overlap.executor.plugin.FatalGpuErrorTest.Buf;
import dev.overlap.executor.plugin.FatalGpuErrorTest.Filled;
import dev.overlap.executor.plugin.FatalGpuErrorTest.Rows;
import dev.overlap.executor.resource.TaskTag;
import dev.overlap.executor.testing.Latches;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A kernel that never returns, with no GPU: plain Java stages behind {@link FencedStages}, the
 * pipeline's stall watch wired to {@link GpuHealth} as the GPU runtime wires it.
 */
class GpuStallTest {
  private static final Duration STALL = Duration.ofMillis(300);

  private final GpuHealth health = new GpuHealth(0, "PLAN");
  private final AtomicInteger deviceMade = new AtomicInteger();
  private final AtomicInteger deviceClosed = new AtomicInteger();
  private final CountDownLatch computing = new CountDownLatch(1);
  private final CountDownLatch release = new CountDownLatch(1);
  private StagePipeline pipeline;
  private BoundedPool<Buf> staging;

  @BeforeEach
  void start() {
    OverlapConf conf = OverlapConf.fromMap(Map.of(GpuKeys.STALL_TIMEOUT.key(), "300ms"));
    pipeline =
        new StagePipeline(
            new DeviceBudget(1000),
            new StagePipeline.Threads(
                "test", null, 1, 1, Duration.ofMillis(50), Duration.ofSeconds(10)));
    pipeline.watchStalls(
        conf.get(GpuKeys.STALL_TIMEOUT), GpuKeys.stallBound(conf), health::stalled);
    staging = new BoundedPool<>(List.of(new Buf(), new Buf()));
  }

  @AfterEach
  void stop() {
    release.countDown();
    if (!pipeline.threadsEnded()) {
      pipeline.close();
    }
    ExecutorState.stopped();
  }

  /** A batch "on the device": counts itself made and closed. */
  final class OnGpu implements AutoCloseable {
    final int first;

    OnGpu(int first) {
      this.first = first;
      deviceMade.incrementAndGet();
    }

    @Override
    public void close() {
      deviceClosed.incrementAndGet();
    }
  }

  /**
   * Stages that carry the first row through; with {@code stuck}, the first kernel never returns.
   */
  BatchStages<Filled, OnGpu, OnGpu, Rows> stages(boolean stuck) {
    return new BatchStages<>() {
      @Override
      public OnGpu upload(Filled in) {
        return new OnGpu(in.first());
      }

      @Override
      public OnGpu compute(OnGpu in) {
        if (stuck && in.first == 0) {
          computing.countDown();
          Latches.awaitThroughInterrupts(release);
        }
        return new OnGpu(in.first);
      }

      @Override
      public Rows download(OnGpu in) {
        return new Rows(in.first);
      }

      @Override
      public String describe(Filled host) {
        return "file part-" + host.first() + ".parquet";
      }

      @Override
      public String doing(PipelineStage stage) {
        return stage == PipelineStage.COMPUTE ? "kernel q6" : null;
      }
    };
  }

  /** A GPU task's rows as PartitionRunner hands them to Spark, its waits ended by the fence. */
  Iterator<Integer> task(String name, boolean stuck, int batches) {
    TaskDriver<Buf, Filled, Rows, Integer> driver =
        new TaskDriver<>(
            pipeline,
            staging,
            FencedStages.of(stages(stuck), health),
            FatalGpuErrorTest.numbers(batches),
            TaskTag.named(name),
            2,
            null,
            health::fenced);
    return FatalErrorPolicy.guard(driver, health);
  }

  static GpuFencedException failure(CompletableFuture<Void> task) {
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> task.get(10, TimeUnit.SECONDS));
    return assertInstanceOf(GpuFencedException.class, e.getCause());
  }

  @Test
  void aKernelPastTheStallTimeoutFencesTheGpuAndFailsItsTaskWithOneLine() throws Exception {
    FatalGpuErrorTest.startExecutor(OnFatalError.EXIT, health);
    CompletableFuture<Void> a =
        CompletableFuture.runAsync(() -> FatalGpuErrorTest.drain(task("a", true, 5)));
    assertTrue(computing.await(10, TimeUnit.SECONDS));
    // Task b's batches queue behind a's batch, which holds the compute thread.
    CompletableFuture<Void> b =
        CompletableFuture.runAsync(() -> FatalGpuErrorTest.drain(task("b", false, 5)));

    GpuFencedException failed = failure(a);

    String line = failed.getMessage();
    assertTrue(
        line.matches(
            "GPU 0 failed: StageStallException: a: batch 0 \\(file part-0\\.parquet\\) stalled in"
                + " compute \\(kernel q6\\): no end after \\d+ ms, past"
                + " spark\\.overlap\\.gpu\\.stallTimeout=300ms; fenced: PLAN"),
        line);
    assertTrue(health.fenced());
    assertEquals(GpuStatus.State.NO_GPU, GpuStatus.current().state());
    // The other task's waits end with the fence, saying why.
    assertEquals(line, failure(b).getMessage());
    // The GPU is checked before it takes more work: a new task runs no stage on it.
    int made = deviceMade.get();
    assertThrows(GpuFencedException.class, () -> FatalGpuErrorTest.drain(task("c", false, 5)));
    assertEquals(made, deviceMade.get(), "a stage ran on the stalled GPU");
    // Under EXIT, the executor goes once a task has failed.
    List<Integer> exits = new ArrayList<>();
    new FatalErrorPolicy(OnFatalError.EXIT, "3", exits::add)
        .taskFailed(health, FatalGpuErrorTest.failure(failed));
    assertEquals(List.of(FatalErrorPolicy.EXIT_CODE), exits);

    // Should the kernel ever return, its batch leaves the pipeline, nothing freed into the GPU.
    release.countDown();
    pipeline.close();
    assertTrue(pipeline.threadsEnded(), "a stage still runs");
    assertEquals(0, pipeline.budget().inFlight(), "batches still in the pipeline");
    assertEquals(0, deviceClosed.get(), "device values freed after the GPU was fenced");
    assertEquals(2, staging.available(), "host staging buffers are still given back");
  }
}
