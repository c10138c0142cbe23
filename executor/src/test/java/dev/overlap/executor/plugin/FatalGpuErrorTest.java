package dev.overlap.executor.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.CudaFatalException;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.CpuKernel;
import dev.overlap.executor.api.GpuKernel;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.config.GpuKeys;
import dev.overlap.executor.config.OnFatalError;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.gpu.FencedStages;
import dev.overlap.executor.gpu.GpuFencedException;
import dev.overlap.executor.gpu.GpuHealth;
import dev.overlap.executor.pipeline.BatchSource;
import dev.overlap.executor.pipeline.BatchStages;
import dev.overlap.executor.pipeline.BoundedPool;
import dev.overlap.executor.pipeline.DeviceBudget;
import dev.overlap.executor.pipeline.PackedBatch;
import dev.overlap.executor.pipeline.PipelineTaskException;
import dev.overlap.executor.pipeline.ResultBatch;
import dev.overlap.executor.pipeline.StagePipeline;
import dev.overlap.executor.pipeline.TaskDriver;
import dev.overlap.executor.resource.TaskTag;
import dev.overlap.executor.task.Iterators;
import dev.overlap.executor.task.PartitionRunner;
import dev.overlap.executor.task.TaskInput;
import dev.overlap.executor.testing.CudaErrors;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.apache.spark.ExceptionFailure;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A fatal CUDA error fences the GPU: plain Java stages behind {@link FencedStages} stand in for the
 * device, and cuDF's own exception for the broken GPU. No GPU, no Spark session.
 */
class FatalGpuErrorTest {
  private static final int ROWS = 3;
  private static final StructType SCHEMA = new StructType().add("n", DataTypes.LongType);

  private final GpuHealth health = new GpuHealth(0, "PLAN");
  private final AtomicInteger deviceMade = new AtomicInteger();
  private final AtomicInteger deviceClosed = new AtomicInteger();
  private final List<Integer> exits = new ArrayList<>();
  private StagePipeline pipeline;
  private BoundedPool<Buf> staging;

  @BeforeEach
  void start() {
    pipeline = new StagePipeline(new DeviceBudget(1000), "test", null);
    staging = new BoundedPool<>(List.of(new Buf(), new Buf()));
  }

  @AfterEach
  void stop() {
    pipeline.close();
    ExecutorState.stopped();
  }

  /** A staging buffer. */
  static final class Buf implements AutoCloseable {
    @Override
    public void close() {}
  }

  /** A batch of {@link #ROWS} numbered rows: gives its staging buffer back when closed. */
  record Filled(int first, Runnable release) implements PackedBatch {
    @Override
    public int rows() {
      return ROWS;
    }

    @Override
    public long copyBytes() {
      return 8 * ROWS;
    }

    @Override
    public long deviceBytes() {
      return 10;
    }

    @Override
    public void close() {
      release.run();
    }
  }

  /** A result: its batch's rows. */
  record Rows(int first) implements ResultBatch<Integer> {
    @Override
    public Iterator<Integer> rows() {
      return IntStream.range(first, first + ROWS).iterator();
    }

    @Override
    public void close() {}
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

  /** Stages that carry the first row number through; {@link #compute} may block or throw. */
  class Stages implements BatchStages<Filled, OnGpu, OnGpu, Rows> {
    void beforeCompute(OnGpu in) throws Exception {}

    @Override
    public OnGpu upload(Filled in) {
      return new OnGpu(in.first());
    }

    @Override
    public OnGpu compute(OnGpu in) throws Exception {
      beforeCompute(in);
      return new OnGpu(in.first);
    }

    @Override
    public Rows download(OnGpu in) {
      return new Rows(in.first);
    }
  }

  /** Stages that throw {@code error} computing the batch that starts at row {@code first}. */
  Stages failing(int first, RuntimeException error) {
    return new Stages() {
      @Override
      void beforeCompute(OnGpu in) {
        if (in.first == first) {
          throw error;
        }
      }
    };
  }

  /** {@code batches} batches of numbered rows. */
  static BatchSource<Buf, Filled> numbers(int batches) {
    return new BatchSource<>() {
      private int filled;

      @Override
      public Filled fill(Buf buffer, Runnable release) {
        return new Filled(ROWS * filled++, release);
      }

      @Override
      public boolean more() {
        return filled < batches;
      }

      @Override
      public long rowsRead() {
        return (long) ROWS * filled;
      }
    };
  }

  /** A GPU task's rows as PartitionRunner hands them to Spark. */
  Iterator<Integer> task(BatchStages<Filled, ?, ?, Rows> stages, int batches) {
    TaskDriver<Buf, Filled, Rows, Integer> driver =
        new TaskDriver<>(
            pipeline,
            staging,
            FencedStages.of(stages, health),
            numbers(batches),
            TaskTag.named("task"),
            2,
            null,
            health::fenced);
    return FatalErrorPolicy.guard(driver, health);
  }

  static void drain(Iterator<?> rows) {
    rows.forEachRemaining(r -> {});
  }

  /** Waits until the pipeline has let go of every batch (failed, dropped or delivered). */
  void awaitPipelineEmpty() throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (pipeline.budget().inFlight() > 0 && System.nanoTime() < until) {
      Thread.sleep(5);
    }
    assertEquals(0, pipeline.budget().inFlight(), "batches still in the pipeline");
  }

  static void startExecutor(OnFatalError mode, GpuHealth health) {
    OverlapConf conf = OverlapConf.fromMap(Map.of(GpuKeys.ON_FATAL_ERROR.key(), mode.name()));
    GpuStatus gpu = new GpuStatus(GpuStatus.State.GPU, Optional.of(0), "");
    ExecutorState.started("3", conf, gpu, null, health, null);
  }

  @Test
  void aFatalErrorInAStageFencesTheGpuAndFailsTheTaskSayingSo() {
    startExecutor(OnFatalError.EXIT, health);
    assertTrue(GpuStatus.current().gpu());
    CudaFatalException fatal = CudaErrors.fatal("an illegal memory access was encountered");

    GpuFencedException e =
        assertThrows(GpuFencedException.class, () -> drain(task(failing(0, fatal), 10)));

    assertTrue(health.fenced());
    assertEquals(
        "GPU 0 failed: CudaFatalException: cudaErrorIllegalAddress: an illegal memory access was"
            + " encountered; fenced: PLAN",
        e.getMessage());
    // How the task met the fence: its failed batch, or its wait ended by the fence, whichever came
    // first; the error's stack trace is in the one log line of the fencing.
    assertTrue(e.getCause() != null);
    GpuStatus status = GpuStatus.current();
    assertEquals(GpuStatus.State.NO_GPU, status.state());
    assertEquals(health.reason().orElseThrow(), status.reason());
  }

  @Test
  void anotherRunningTaskFailsSayingSoAndNothingOnTheDeviceIsFreedAfterwards() throws Exception {
    CountDownLatch computing = new CountDownLatch(1);
    CountDownLatch fail = new CountDownLatch(1);
    Stages blockedThenFatal =
        new Stages() {
          @Override
          void beforeCompute(OnGpu in) throws InterruptedException {
            computing.countDown();
            fail.await();
            throw CudaErrors.fatal("unspecified launch failure");
          }
        };
    CompletableFuture<Void> a = CompletableFuture.runAsync(() -> drain(task(blockedThenFatal, 5)));
    computing.await();
    // Task b's batches queue behind a's batch, which holds the compute thread.
    CompletableFuture<Void> b = CompletableFuture.runAsync(() -> drain(task(new Stages(), 5)));
    while (deviceMade.get() < 4) {
      Thread.sleep(5);
    }
    fail.countDown();

    for (CompletableFuture<Void> t : List.of(a, b)) {
      ExecutionException e = assertThrows(ExecutionException.class, t::get);
      assertInstanceOf(GpuFencedException.class, e.getCause());
      assertTrue(e.getCause().getMessage().startsWith("GPU 0 failed: CudaFatalException"));
    }
    awaitPipelineEmpty();
    assertEquals(4, deviceMade.get(), "no stage ran after the fatal error");
    assertEquals(0, deviceClosed.get(), "device values freed into the broken context");
    assertEquals(2, staging.available(), "host staging buffers are still given back");
  }

  @Test
  void aNonFatalCudaErrorFailsOnlyItsTask() throws InterruptedException {
    RuntimeException oom = CudaErrors.nonFatal("out of memory");
    PipelineTaskException e =
        assertThrows(PipelineTaskException.class, () -> drain(task(failing(0, oom), 4)));
    assertEquals(oom, e.getCause());
    assertFalse(health.fenced());

    List<Integer> rows = new ArrayList<>();
    task(new Stages(), 4).forEachRemaining(rows::add);
    assertEquals(IntStream.range(0, 4 * ROWS).boxed().toList(), rows);
    awaitPipelineEmpty();
    assertEquals(deviceMade.get(), deviceClosed.get(), "device values closed as usual");
  }

  static ExceptionFailure failure(Throwable t) {
    return new ExceptionFailure(t, scala.collection.immutable.List$.MODULE$.empty());
  }

  @Test
  void underExitTheTaskFailureAfterTheFatalErrorExitsTheExecutorOnce() {
    FatalErrorPolicy policy = new FatalErrorPolicy(OnFatalError.EXIT, "3", exits::add);
    policy.taskFailed(health, failure(new IllegalStateException("a bug in a kernel")));
    assertEquals(List.of(), exits, "an ordinary failure leaves the executor alone");

    policy.taskFailed(
        health, failure(new PipelineTaskException("batch 0", CudaErrors.fatal("illegal address"))));
    policy.taskFailed(health, failure(new IllegalStateException("the next failure")));

    assertTrue(health.fenced());
    assertEquals(List.of(FatalErrorPolicy.EXIT_CODE), exits);
    assertTrue(policy.plan().contains("exits (code 20)"), policy.plan());
  }

  @Test
  void inLocalModeTheDriverDoesNotExit() {
    FatalErrorPolicy policy = new FatalErrorPolicy(OnFatalError.EXIT, "driver", exits::add);
    policy.taskFailed(health, failure(CudaErrors.fatal("illegal address")));
    assertTrue(health.fenced());
    assertEquals(List.of(), exits);
    assertTrue(policy.plan().contains("does not exit"), policy.plan());
  }

  /** Doubles its input; its GPU side must not run once the GPU is fenced. */
  static final class Doubling implements GpuKernel {
    private static final long serialVersionUID = 1L;
    private final boolean hasCpu;

    Doubling(boolean hasCpu) {
      this.hasCpu = hasCpu;
    }

    @Override
    public StructType outputSchema(StructType input) {
      return input;
    }

    @Override
    public Table apply(Table input) {
      throw new AssertionError("GPU work on a fenced GPU");
    }

    @Override
    public CpuKernel cpu() {
      if (!hasCpu) {
        return null;
      }
      return rows -> Iterators.map(rows, r -> RowFactory.create(2 * r.getLong(0)));
    }
  }

  static Iterator<InternalRow> input() {
    List<InternalRow> rows = new ArrayList<>();
    for (long i = 0; i < 3; i++) {
      rows.add(new GenericInternalRow(new Object[] {i}));
    }
    return rows.iterator();
  }

  static Iterator<InternalRow> run(boolean hasCpu) {
    return new PartitionRunner(new Doubling(hasCpu), SCHEMA, SCHEMA, null, Map.of())
        .map(new TaskInput.Rows(input()));
  }

  @Test
  void underCpuTheExecutorStaysAndTheNextTaskRunsTheKernelsCpuImplementation() {
    startExecutor(OnFatalError.CPU, health);
    FatalErrorPolicy policy = new FatalErrorPolicy(OnFatalError.CPU, "3", exits::add);
    policy.taskFailed(health, failure(CudaErrors.fatal("illegal address")));
    assertEquals(List.of(), exits);

    List<Long> out = new ArrayList<>();
    run(true).forEachRemaining(r -> out.add(r.getLong(0)));
    assertEquals(List.of(0L, 2L, 4L), out);

    IllegalStateException noCpu = assertThrows(IllegalStateException.class, () -> run(false));
    assertTrue(
        noCpu.getMessage().contains("GPU 0 failed: CudaFatalException")
            && noCpu.getMessage().contains("The kernel has no CPU implementation"),
        noCpu.getMessage());
  }

  @Test
  void underExitANewTaskIsRefusedSayingSo() {
    startExecutor(OnFatalError.EXIT, health);
    health.check(CudaErrors.fatal("illegal address"));
    GpuFencedException e = assertThrows(GpuFencedException.class, () -> run(true));
    assertEquals(health.message(), e.getMessage());
  }

  @Test
  void inLocalModeUnderExitTheNextTaskRunsTheKernelsCpuImplementation() {
    OverlapConf conf = OverlapConf.fromMap(Map.of(GpuKeys.ON_FATAL_ERROR.key(), "EXIT"));
    GpuStatus gpu = new GpuStatus(GpuStatus.State.GPU, Optional.of(0), "");
    ExecutorState.started("driver", conf, gpu, null, health, null);
    health.check(CudaErrors.fatal("illegal address"));
    List<Long> out = new ArrayList<>();
    run(true).forEachRemaining(r -> out.add(r.getLong(0)));
    assertEquals(List.of(0L, 2L, 4L), out);
  }
}
