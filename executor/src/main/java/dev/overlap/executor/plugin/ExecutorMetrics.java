package dev.overlap.executor.plugin;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.gpu.GpuHealth;
import dev.overlap.executor.gpu.GpuRuntime;
import dev.overlap.executor.pipeline.PipelineMetrics;
import dev.overlap.executor.resource.PinnedShare;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;

/**
 * The executor plugin's metrics in Spark's metrics system, under the plugin's namespace ({@code
 * plugin.} and the class named in {@code spark.plugins}): gauges of the executor's state now and
 * counters of its work since it started. Each reads the GPU runtime once it is set up, without
 * waiting for it. Without a GPU they keep a meaning: nothing is in use or in flight (0), the GPU is
 * neither active nor fenced (0), and the CPU tasks are counted; the GPU figures stay 0.
 */
public final class ExecutorMetrics {
  private static final LongAdder GPU_TASKS = new LongAdder();
  private static final LongAdder CPU_TASKS = new LongAdder();
  // Not the pipeline's own byte count: that one counts each batch's device bytes (decoded Parquet
  // columns are larger than the compressed chunks copied).
  private static final LongAdder COPIED_IN_BYTES = new LongAdder();
  private static final LongAdder CPU_KERNEL_NANOS = new LongAdder();

  /** The gauges, in the order docs/operations.md lists them. */
  public static final List<String> GAUGES =
      List.of(
          "gpu.active",
          "gpu.fenced",
          "deviceBudget.limitBytes",
          "deviceBudget.inUseBytes",
          "deviceBudget.peakBytes",
          "deviceBudget.waitingTasks",
          "staging.buffers",
          "staging.buffersFree",
          "pinned.heldBytes",
          "pinned.limitBytes",
          "pipeline.batchesInFlight");

  /** The counters, in the order docs/operations.md lists them. */
  public static final List<String> COUNTERS =
      List.of(
          "tasks.gpu",
          "tasks.cpu",
          "pipeline.batches",
          "pipeline.batchesFailed",
          "pipeline.copyIn.bytes",
          "busy.pack.ms",
          "busy.copyIn.ms",
          "busy.compute.ms",
          "busy.copyBack.ms",
          "busy.cpuKernel.ms",
          "outOfMemory.retries",
          "outOfMemory.splits");

  private ExecutorMetrics() {}

  /**
   * A task of this executor ended on the GPU path (its pipeline's figures reported), having
   * submitted {@code copiedBytes} for copying host → device. For a task that succeeds, that is the
   * figure its report and stage accumulators count; a failed or killed task's count is added here
   * too, though Spark drops its accumulators.
   */
  public static void gpuTaskEnded(long copiedBytes) {
    GPU_TASKS.increment();
    COPIED_IN_BYTES.add(copiedBytes);
  }

  /**
   * A task of this executor ended on the CPU path, after {@code kernelNanos} in the kernel's CPU
   * implementation.
   */
  public static void cpuTaskEnded(long kernelNanos) {
    CPU_TASKS.increment();
    CPU_KERNEL_NANOS.add(kernelNanos);
  }

  /** Registers every gauge and counter on the plugin's registry, at the plugin's init. */
  static void register(MetricRegistry registry) {
    gauge(registry, "gpu.active", () -> gpu() ? 1 : 0);
    gauge(registry, "gpu.fenced", () -> fenced() ? 1 : 0);
    gauge(registry, "deviceBudget.limitBytes", runtime(r -> r.pipeline().budget().maxBytes()));
    gauge(registry, "deviceBudget.inUseBytes", runtime(r -> r.pipeline().budget().inFlight()));
    gauge(registry, "deviceBudget.peakBytes", runtime(r -> r.pipeline().budget().peak()));
    gauge(registry, "deviceBudget.waitingTasks", runtime(r -> r.pipeline().budget().waiting()));
    gauge(registry, "staging.buffers", runtime(r -> r.staging().size()));
    gauge(registry, "staging.buffersFree", runtime(r -> r.staging().available()));
    gauge(registry, "pinned.heldBytes", PinnedShare::held);
    gauge(registry, "pinned.limitBytes", runtime(r -> pinnedLimit()));
    gauge(registry, "pipeline.batchesInFlight", pipeline(PipelineMetrics::batchesInFlight));
    counter(registry, "tasks.gpu", GPU_TASKS::sum);
    counter(registry, "tasks.cpu", CPU_TASKS::sum);
    counter(registry, "pipeline.batches", pipeline(m -> m.snapshot().batches()));
    counter(registry, "pipeline.batchesFailed", pipeline(m -> m.snapshot().failed()));
    counter(registry, "pipeline.copyIn.bytes", COPIED_IN_BYTES::sum);
    for (PipelineStage s : PipelineStage.values()) {
      counter(
          registry, "busy." + busyName(s) + ".ms", pipeline(m -> m.snapshot().busy(s) / 1_000_000));
    }
    counter(registry, "busy.cpuKernel.ms", () -> CPU_KERNEL_NANOS.sum() / 1_000_000);
    counter(registry, "outOfMemory.retries", pipeline(PipelineMetrics::outOfMemoryRetries));
    counter(registry, "outOfMemory.splits", pipeline(PipelineMetrics::outOfMemorySplits));
  }

  /** A stage as the metrics and the stage accumulators name it. */
  static String busyName(PipelineStage s) {
    return switch (s) {
      case PACK -> "pack";
      case UPLOAD -> "copyIn";
      case COMPUTE -> "compute";
      case DOWNLOAD -> "copyBack";
    };
  }

  /** Whether kernels run on this executor's GPU now: set up, and not fenced since. */
  private static boolean gpu() {
    return ExecutorState.runtimeIfStarted().map(r -> !r.health().fenced()).orElse(false);
  }

  private static boolean fenced() {
    return ExecutorState.runtimeIfStarted()
        .map(GpuRuntime::health)
        .map(GpuHealth::fenced)
        .orElse(false);
  }

  /** The pinned share's limit; -1 where another plugin made the pool and none is known here. */
  private static long pinnedLimit() {
    long l = PinnedShare.limitBytes();
    return l == Long.MAX_VALUE ? -1 : l;
  }

  private static LongSupplier runtime(ToLongFunction<GpuRuntime> read) {
    return () -> ExecutorState.runtimeIfStarted().map(read::applyAsLong).orElse(0L);
  }

  private static LongSupplier pipeline(ToLongFunction<PipelineMetrics> read) {
    return runtime(r -> read.applyAsLong(r.pipeline().metrics()));
  }

  private static void gauge(MetricRegistry registry, String name, LongSupplier read) {
    registry.register(name, (Gauge<Long>) read::getAsLong);
  }

  /**
   * A counter that reads a total kept elsewhere (only ever growing while the executor runs): a
   * Dropwizard counter, so that sinks report it as one (Prometheus: a {@code _Count}).
   */
  private static void counter(MetricRegistry registry, String name, LongSupplier read) {
    registry.register(
        name,
        new Counter() {
          @Override
          public long getCount() {
            return read.getAsLong();
          }
        });
  }
}
