package dev.overlap.executor.plugin;

import dev.overlap.executor.config.GpuKeys;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.gpu.FaultedFiles;
import dev.overlap.executor.gpu.GpuHealth;
import dev.overlap.executor.gpu.GpuRuntime;
import dev.overlap.executor.resource.BatchTracker;
import dev.overlap.executor.trace.TraceOutput;
import dev.overlap.executor.trace.TraceRecorder;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.IntConsumer;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Executor side: reads the configuration, then picks the GPU and sets up the {@link GpuRuntime}
 * ({@link GpuStart}, on a thread of its own by default), logging one line saying how jobs will run.
 * Without a usable GPU the executor still starts; kernels then run their CPU implementation (or
 * fail, per {@code spark.overlap.noGpu.mode}).
 *
 * <p>An invalid {@code spark.overlap.*} value throws from {@link #init}, so the executor exits with
 * a message naming the key; it is thrown, not also logged here.
 *
 * <p>After a fatal CUDA error, {@link #onTaskFailed} applies {@code spark.overlap.gpu.onFatalError}
 * ({@link FatalErrorPolicy}).
 */
public final class OverlapExecutorPlugin implements ExecutorPlugin {
  private static final Logger LOG = LoggerFactory.getLogger("dev.overlap");

  private String executorId = "?";
  private String traceDir = "";
  private TraceRecorder trace;
  private final IntConsumer exit;
  private volatile FatalErrorPolicy onFatal;

  public OverlapExecutorPlugin() {
    this(FatalErrorPolicy::exitJvm);
  }

  /**
   * @param exit ends the process with the status given, after a fatal CUDA error under EXIT
   */
  OverlapExecutorPlugin(IntConsumer exit) {
    this.exit = exit;
  }

  @Override
  public void init(PluginContext ctx, Map<String, String> extraConf) {
    long begin = System.nanoTime();
    OverlapConf conf = OverlapConf.read(k -> ctx.conf().get(k, null));
    String id = ctx.executorID();
    FatalErrorPolicy policy = new FatalErrorPolicy(conf.get(GpuKeys.ON_FATAL_ERROR), id, exit);
    CudfVersions.cudfVersionLine(
            OverlapExecutorPlugin.class.getClassLoader(), CudfVersions.CUDF_BUILT)
        .ifPresent(line -> LOG.warn("Overlap: {}", line));
    if (conf.get(OverlapConf.DEBUG_TRACK_BATCHES)) {
      BatchTracker.start(LOG::warn);
      LOG.info(
          "Overlap: {} is on: each task's batches still held at its end are logged",
          OverlapConf.DEBUG_TRACK_BATCHES.key());
    }
    // Decided here, before any CUDA call: an executor given several GPUs fails its start.
    boolean enabled = conf.get(OverlapConf.ENABLED);
    Optional<Integer> assigned =
        enabled ? GpuStart.assignedDevice(ctx.resources(), extraConf) : Optional.empty();
    executorId = id;
    TraceOutput.executorStarting();
    traceDir = conf.get(OverlapConf.TRACE_DIR).trim();
    TraceRecorder recorder =
        traceDir.isEmpty()
            ? null
            : new TraceRecorder(System.nanoTime(), TraceRecorder.DEFAULT_MAX_SPANS);
    trace = recorder;
    onFatal = policy;
    // In local mode the executor is the driver's process and shares its record: nothing to ask.
    FaultedFiles.link(
        "driver".equals(id)
            ? null
            : m -> {
              try {
                return ctx.ask(m);
              } catch (Exception e) {
                if (e instanceof InterruptedException) {
                  Thread.currentThread().interrupt();
                }
                throw new IllegalStateException("asking the driver failed: " + e, e);
              }
            });
    ExecutorMetrics.register(ctx.metricRegistry());
    // Spark starts spark.plugins.defaultList's plugins first, then spark.plugins'.
    String plugins =
        ctx.conf().get("spark.plugins.defaultList", "") + "," + ctx.conf().get("spark.plugins", "");
    new GpuStart(id, conf, policy, enabled, assigned, recorder, traceDir, begin).launch(plugins);
  }

  /** A fatal CUDA error in the failure, or one seen before, fences the GPU; EXIT then exits. */
  @Override
  public void onTaskFailed(TaskFailedReason reason) {
    FatalErrorPolicy policy = onFatal;
    Optional<GpuHealth> health = ExecutorState.health();
    if (policy != null && health.isPresent()) {
      policy.taskFailed(health.get(), reason);
    }
  }

  @Override
  public void shutdown() {
    BatchTracker.stop();
    GpuRuntime r = ExecutorState.stopped();
    if (r != null) {
      try {
        r.close();
      } catch (RuntimeException e) {
        LOG.error("Overlap: closing the GPU runtime failed", e);
      }
    }
    TraceRecorder t = trace;
    trace = null;
    if (t != null) {
      try {
        List<Path> files =
            TraceOutput.write(t, Path.of(traceDir), executorId, ProcessHandle.current().pid());
        LOG.info("Overlap: executor {} wrote its timeline: {}", executorId, files);
      } catch (IOException | RuntimeException e) {
        LOG.error("Overlap: writing the timeline into {} failed", traceDir, e);
      }
    }
  }
}
