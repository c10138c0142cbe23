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
    OverlapConf conf = OverlapConf.read(k -> ctx.conf().get(k, null));
    String id = ctx.executorID();
    FatalErrorPolicy policy =
        new FatalErrorPolicy(conf.get(OverlapConf.GPU_ON_FATAL_ERROR), id, exit);
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
        enabled ? assignedDevice(ctx.resources(), extraConf) : Optional.empty();
    executorId = id;
    TraceOutput.executorStarting();
    traceDir = conf.get(OverlapConf.TRACE_DIR).trim();
    TraceRecorder recorder =
        traceDir.isEmpty()
            ? null
            : new TraceRecorder(System.nanoTime(), TraceRecorder.DEFAULT_MAX_SPANS);
    trace = recorder;
    onFatal = policy;
    registerMetrics(ctx.metricRegistry());
    Runnable start = () -> startGpu(id, conf, policy, enabled, assigned, recorder, begin);
    // Spark starts spark.plugins.defaultList's plugins first, then spark.plugins'.
    String plugins =
        ctx.conf().get("spark.plugins.defaultList", "") + "," + ctx.conf().get("spark.plugins", "");
    if (conf.get(OverlapConf.GPU_BACKGROUND_START) && !rapidsStartsAfter(plugins)) {
      // Loading cuDF's native libraries and allocating the pools take seconds; Spark starts the
      // session and the driver plans meanwhile. Whatever asks for the executor's state waits.
      ExecutorState.starting(id);
      Thread t = new Thread(start, START_THREAD);
      t.setDaemon(true);
      try {
        t.start();
      } catch (RuntimeException | Error e) {
        // No room for another thread: the start runs here, and publishes as ever.
        LOG.warn("Overlap: the GPU's start thread did not start ({}); starting in init", e);
        start.run();
      }
    } else {
      start.run();
    }
  }

  /** The thread the GPU starts on, unless {@code spark.overlap.gpu.backgroundStart=false}. */
  static final String START_THREAD = "overlap-gpu-start";

  /** The RAPIDS Accelerator's plugin class, which sets up RMM and the pinned pool in its init. */
  static final String RAPIDS_PLUGIN = "com.nvidia.spark.SQLPlugin";

  /**
   * Whether {@code plugins} (Spark's plugin lists, started in their order) names the RAPIDS
   * Accelerator after Overlap: its init would then set up RMM while ours may be doing so on a
   * thread of its own, so ours starts in init as before. Listed first, RAPIDS has finished its set
   * up before ours begins.
   */
  static boolean rapidsStartsAfter(String plugins) {
    List<String> names = java.util.Arrays.stream(plugins.split(",")).map(String::trim).toList();
    int ours = names.indexOf(OverlapDriverPlugin.PLUGIN_CLASS);
    int rapids = names.indexOf(RAPIDS_PLUGIN);
    return rapids >= 0 && (ours < 0 || rapids > ours);
  }

  /**
   * Finds and sets up the GPU, then publishes the executor's state ({@link ExecutorState#started}),
   * also when that fails. {@code assigned} is empty when Spark assigned no GPU: the first device
   * CUDA sees is used.
   */
  private void startGpu(
      String id,
      OverlapConf conf,
      FatalErrorPolicy policy,
      boolean enabled,
      Optional<Integer> assigned,
      TraceRecorder recorder,
      long begin) {
    long chosen = System.nanoTime();
    long setUp = chosen;
    GpuStatus status = noGpu("the GPU's start did not end");
    GpuRuntime runtime = null;
    Throwable setupFailure = null;
    try {
      if (!enabled) {
        status = noGpu(OverlapConf.ENABLED.key() + "=false");
      } else {
        DeviceChoice choice =
            assigned.isPresent() ? DeviceChoice.of(assigned.get()) : probeDevice();
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
      if (recorder != null) {
        if (runtime != null) {
          runtime.pipeline().listener(StageListener.both(runtime.pipeline().listener(), recorder));
        }
        LOG.info(
            "Overlap: executor {} records a timeline into {} ({}), written when it shuts down",
            id,
            traceDir,
            runtime != null ? "GPU path" : "no GPU: a span per partition of the CPU path");
      }
    } catch (RuntimeException | Error e) {
      // Nothing above is meant to throw. Before the GPU was set up, the executor runs without one;
      // after (the timeline's listener, a log line), the GPU works and stays in use.
      setupFailure = e;
      if (runtime == null) {
        status = noGpu("starting the plugin failed: " + e);
      } else {
        LOG.error("Overlap: executor {}: a step after the GPU's set-up failed", id, e);
      }
    } finally {
      // Always published, so that nothing waits for a start that ended.
      ExecutorState.started(
          id, conf, status, runtime, runtime == null ? null : runtime.health(), recorder);
    }
    String how =
        conf.get(OverlapConf.NO_GPU_MODE) == NoGpuMode.CPU
            ? "kernels run their CPU implementation"
            : "GPU jobs fail (" + OverlapConf.NO_GPU_MODE.key() + "=FAIL)";
    TIMES.info(
        "executor {}'s plugin started in {} ms: the GPU found {} ms (cuDF's native libraries"
            + " loaded on the first CUDA call), set up {} ms",
        id,
        (System.nanoTime() - begin) / 1_000_000,
        (chosen - begin) / 1_000_000,
        (setUp - chosen) / 1_000_000);
    if (runtime != null) {
      LOG.info(
          "Overlap: executor {} on GPU {}: {} staging buffers of {} ({}), device budget {}",
          id,
          runtime.device(),
          conf.get(OverlapConf.STAGING_BUFFERS),
          ByteSize.format(conf.get(OverlapConf.STAGING_BUFFER_SIZE)),
          runtime.stagingPinned() ? "pinned" : "PAGEABLE",
          ByteSize.format(conf.get(OverlapConf.PREFETCH_MAX_BYTES)));
    } else if (setupFailure != null && !status.gpu()) {
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
   * The GPU Spark assigned (exactly one address), else the driver's in local mode, else empty: the
   * first device CUDA sees ({@link #probeDevice}). Makes no CUDA call.
   *
   * @throws IllegalArgumentException when Spark assigned several GPUs, or an address that is not a
   *     device ordinal
   */
  static Optional<Integer> assignedDevice(
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
      return Optional.of(parseAddress(gpu.addresses()[0], "spark.executor.resource.gpu"));
    }
    String fromDriver = extraConf.get(OverlapDriverPlugin.DRIVER_GPU_ADDRESS);
    if (fromDriver != null) {
      return Optional.of(parseAddress(fromDriver, "spark.driver.resource.gpu"));
    }
    return Optional.empty();
  }

  /** Device 0 when CUDA sees one, else why not. The first CUDA call loads cuDF's native code. */
  static DeviceChoice probeDevice() {
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

  /**
   * The plugin's metrics, registered at init as Spark expects; each reads the GPU runtime once it
   * is set up (0 until then, and without a GPU), without waiting for it.
   */
  private static void registerMetrics(MetricRegistry registry) {
    for (PipelineStage s : PipelineStage.values()) {
      registry.register(
          "busyMillis." + s.name().toLowerCase(java.util.Locale.ROOT),
          gauge(r -> r.pipeline().metrics().snapshot().busy(s) / 1_000_000));
    }
    registry.register("batches", gauge(r -> r.pipeline().metrics().snapshot().batches()));
    registry.register("bytesUploaded", gauge(r -> r.pipeline().metrics().snapshot().bytes()));
    registry.register("deviceBytesInFlight", gauge(r -> r.pipeline().budget().inFlight()));
    registry.register(
        "stagingBuffersFree",
        (Gauge<Integer>)
            () -> ExecutorState.runtimeIfStarted().map(r -> r.staging().available()).orElse(0));
  }

  private static Gauge<Long> gauge(java.util.function.ToLongFunction<GpuRuntime> read) {
    return () -> ExecutorState.runtimeIfStarted().map(read::applyAsLong).orElse(0L);
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
