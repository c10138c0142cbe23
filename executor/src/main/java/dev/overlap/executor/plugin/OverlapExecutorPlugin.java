package dev.overlap.executor.plugin;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.config.ByteSize;
import dev.overlap.executor.config.NoGpuMode;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.gpu.GpuHealth;
import dev.overlap.executor.gpu.GpuRuntime;
import dev.overlap.executor.pipeline.StageListener;
import dev.overlap.executor.resource.BatchTracker;
import dev.overlap.executor.trace.Diagnostics;
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
import org.apache.spark.resource.ResourceInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Executor side: picks the GPU, sets up the {@link GpuRuntime}, and logs one line saying how jobs
 * will run. Without a usable GPU the executor still starts; kernels then run their CPU
 * implementation (or fail, per {@code spark.overlap.noGpu.mode}).
 *
 * <p>An invalid {@code spark.overlap.*} value throws from {@link #init}, so the executor exits with
 * a message naming the key; it is thrown, not also logged here.
 *
 * <p>After a fatal CUDA error, {@link #onTaskFailed} applies {@code spark.overlap.gpu.onFatalError}
 * ({@link FatalErrorPolicy}).
 */
public final class OverlapExecutorPlugin implements ExecutorPlugin {
  private static final Logger LOG = LoggerFactory.getLogger("dev.overlap");

  /** Start-up times: to the run's log only, not to the terminal. */
  private static final Logger TIMES = Diagnostics.logger(OverlapExecutorPlugin.class);

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
    long chosen = begin;
    long setUp = begin;
    OverlapConf conf = OverlapConf.read(k -> ctx.conf().get(k, null));
    String id = ctx.executorID();
    GpuStatus status;
    GpuRuntime runtime = null;
    Throwable setupFailure = null;
    FatalErrorPolicy policy =
        new FatalErrorPolicy(conf.get(OverlapConf.GPU_ON_FATAL_ERROR), id, exit);
    String how =
        conf.get(OverlapConf.NO_GPU_MODE) == NoGpuMode.CPU
            ? "kernels run their CPU implementation"
            : "GPU jobs fail (" + OverlapConf.NO_GPU_MODE.key() + "=FAIL)";
    CudfVersions.cudfVersionLine(
            OverlapExecutorPlugin.class.getClassLoader(), CudfVersions.CUDF_BUILT)
        .ifPresent(line -> LOG.warn("Overlap: {}", line));
    if (conf.get(OverlapConf.DEBUG_TRACK_BATCHES)) {
      BatchTracker.start(LOG::warn);
      LOG.info(
          "Overlap: {} is on: each task's batches still held at its end are logged",
          OverlapConf.DEBUG_TRACK_BATCHES.key());
    }
    if (!conf.get(OverlapConf.ENABLED)) {
      status = noGpu(OverlapConf.ENABLED.key() + "=false");
    } else {
      DeviceChoice choice = chooseDevice(ctx.resources(), extraConf);
      chosen = System.nanoTime();
      setUp = chosen;
      Optional<Integer> device = choice.device();
      if (device.isEmpty()) {
        status = noGpu(choice.problem());
      } else {
        try {
          runtime =
              GpuRuntime.start(device.get(), conf, new GpuHealth(device.get(), policy.plan()));
          status = new GpuStatus(GpuStatus.State.GPU, device, "");
          setUp = System.nanoTime();
        } catch (Throwable t) {
          setupFailure = t;
          status = noGpu("setting up GPU " + device.get() + " failed: " + t);
        }
      }
    }
    executorId = id;
    TraceOutput.executorStarting();
    traceDir = conf.get(OverlapConf.TRACE_DIR).trim();
    if (!traceDir.isEmpty()) {
      trace = new TraceRecorder(System.nanoTime(), TraceRecorder.DEFAULT_MAX_SPANS);
      if (runtime != null) {
        runtime.pipeline().listener(StageListener.both(runtime.pipeline().listener(), trace));
      }
      LOG.info(
          "Overlap: executor {} records a timeline into {} ({}), written when it shuts down",
          id,
          traceDir,
          runtime != null ? "GPU path" : "no GPU: a span per partition of the CPU path");
    }
    onFatal = policy;
    ExecutorState.started(
        id, conf, status, runtime, runtime == null ? null : runtime.health(), trace);
    TIMES.info(
        "executor {}'s plugin started in {} ms: the GPU found {} ms (cuDF's native libraries"
            + " loaded on the first CUDA call), set up {} ms",
        id,
        (System.nanoTime() - begin) / 1_000_000,
        (chosen - begin) / 1_000_000,
        (setUp - chosen) / 1_000_000);
    if (runtime != null) {
      registerMetrics(ctx.metricRegistry(), runtime);
      LOG.info(
          "Overlap: executor {} on GPU {}: {} staging buffers of {} ({}), device budget {}",
          id,
          runtime.device(),
          conf.get(OverlapConf.STAGING_BUFFERS),
          ByteSize.format(conf.get(OverlapConf.STAGING_BUFFER_SIZE)),
          runtime.stagingPinned() ? "pinned" : "PAGEABLE",
          ByteSize.format(conf.get(OverlapConf.PREFETCH_MAX_BYTES)));
    } else if (setupFailure != null) {
      // One line for the failure, with its stack trace: the reason is not logged a second time.
      LOG.error(
          "Overlap: executor {} has no usable GPU ({}): {}",
          id,
          status.reason(),
          how,
          setupFailure);
    } else {
      LOG.warn("Overlap: executor {} has no usable GPU ({}): {}", id, status.reason(), how);
    }
  }

  private static GpuStatus noGpu(String reason) {
    return new GpuStatus(GpuStatus.State.NO_GPU, Optional.empty(), reason);
  }

  /** The device to use, or why there is none. */
  record DeviceChoice(Optional<Integer> device, String problem) {
    static DeviceChoice of(int device) {
      return new DeviceChoice(Optional.of(device), "");
    }
  }

  /**
   * The GPU Spark assigned (exactly one address), else the driver's in local mode, else device 0
   * when CUDA sees one.
   */
  static DeviceChoice chooseDevice(
      Map<String, ResourceInformation> resources, Map<String, String> extraConf) {
    ResourceInformation gpu = resources.get("gpu");
    if (gpu != null && gpu.addresses().length > 0) {
      if (gpu.addresses().length != 1) {
        throw new IllegalArgumentException(
            "Overlap drives one GPU per executor but Spark assigned "
                + gpu.addresses().length
                + " ("
                + String.join(",", gpu.addresses())
                + "): set spark.executor.resource.gpu.amount=1");
      }
      return DeviceChoice.of(parseAddress(gpu.addresses()[0], "spark.executor.resource.gpu"));
    }
    String fromDriver = extraConf.get(OverlapDriverPlugin.DRIVER_GPU_ADDRESS);
    if (fromDriver != null) {
      return DeviceChoice.of(parseAddress(fromDriver, "spark.driver.resource.gpu"));
    }
    try {
      return ai.rapids.cudf.Cuda.getDeviceCount() > 0
          ? DeviceChoice.of(0)
          : new DeviceChoice(Optional.empty(), "no CUDA device is visible");
    } catch (Throwable t) {
      return new DeviceChoice(Optional.empty(), "no CUDA device is visible (" + describe(t) + ")");
    }
  }

  private static int parseAddress(String address, String source) {
    try {
      return Integer.parseInt(address.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "GPU address '" + address + "' from " + source + " is not a CUDA device ordinal");
    }
  }

  /** A short reason for a failed CUDA probe, without native stack detail. */
  static String describe(Throwable t) {
    String m = String.valueOf(t.getMessage());
    if (t instanceof NoClassDefFoundError || t instanceof ClassNotFoundException) {
      return "cuDF is not on the classpath: ship the cuDF or RAPIDS jar with --jars";
    } else if (t instanceof UnsatisfiedLinkError) {
      return "cuDF's native library did not load: " + m;
    } else if (m.contains("cudaErrorInsufficientDriver")) {
      return "no NVIDIA driver, or one older than CUDA 13 needs";
    } else if (m.contains("cudaErrorNoDevice")) {
      return "the driver sees no GPU";
    }
    return t.getClass().getSimpleName() + ": " + m.lines().findFirst().orElse("");
  }

  private static void registerMetrics(MetricRegistry registry, GpuRuntime runtime) {
    for (PipelineStage s : PipelineStage.values()) {
      registry.register(
          "busyMillis." + s.name().toLowerCase(java.util.Locale.ROOT),
          (Gauge<Long>) () -> runtime.pipeline().metrics().snapshot().busy(s) / 1_000_000);
    }
    registry.register(
        "batches", (Gauge<Long>) () -> runtime.pipeline().metrics().snapshot().batches());
    registry.register(
        "bytesUploaded", (Gauge<Long>) () -> runtime.pipeline().metrics().snapshot().bytes());
    registry.register(
        "deviceBytesInFlight", (Gauge<Long>) () -> runtime.pipeline().budget().inFlight());
    registry.register("stagingBuffersFree", (Gauge<Integer>) () -> runtime.staging().available());
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
