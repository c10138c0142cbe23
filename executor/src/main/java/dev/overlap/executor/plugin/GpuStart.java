package dev.overlap.executor.plugin;

import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.config.ByteSize;
import dev.overlap.executor.config.GpuKeys;
import dev.overlap.executor.config.NoGpuMode;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.gpu.GpuHealth;
import dev.overlap.executor.gpu.GpuRuntime;
import dev.overlap.executor.pipeline.StageListener;
import dev.overlap.executor.trace.Diagnostics;
import dev.overlap.executor.trace.TraceRecorder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.spark.resource.ResourceInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One executor's GPU start: the device (Spark's assignment, the driver's in local mode, else the
 * first CUDA sees), the {@link GpuRuntime}, the timeline's listener, and the executor's state
 * published in {@link ExecutorState}, with one line saying how jobs will run. It runs on a thread
 * of its own or in the plugin's init ({@link #launch}).
 *
 * @param assigned the device Spark or the driver gave, decided in init without a CUDA call; empty
 *     for the first device CUDA sees
 */
record GpuStart(
    String id,
    OverlapConf conf,
    FatalErrorPolicy policy,
    boolean enabled,
    Optional<Integer> assigned,
    TraceRecorder recorder,
    String traceDir,
    long begin)
    implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger("dev.overlap");

  /** Start-up times, under the plugin's name: to the run's log only, not to the terminal. */
  private static final Logger TIMES = Diagnostics.logger(OverlapExecutorPlugin.class);

  /**
   * Starts the GPU: on a thread of its own ({@code spark.overlap.gpu.backgroundStart}), unless
   * {@code plugins} lists the RAPIDS Accelerator after Overlap or the thread cannot start; then
   * here. Either way the executor's state is published when it ends.
   *
   * @param plugins Spark's plugin lists, in the order Spark starts them
   */
  void launch(String plugins) {
    if (conf.get(GpuKeys.BACKGROUND_START) && !rapidsStartsAfter(plugins)) {
      // Loading cuDF's native libraries and allocating the pools take seconds; Spark starts the
      // session and the driver plans meanwhile. Whatever asks for the executor's state waits.
      ExecutorState.starting(id);
      Thread t = new Thread(this, START_THREAD);
      t.setDaemon(true);
      try {
        t.start();
      } catch (RuntimeException | Error e) {
        // No room for another thread: the start runs here, and publishes as ever.
        LOG.warn("Overlap: the GPU's start thread did not start ({}); starting in init", e);
        run();
      }
    } else {
      run();
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
   * also when that fails.
   */
  @Override
  public void run() {
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

  /**
   * Files of which one exists wherever an NVIDIA driver can serve CUDA: the kernel module's version
   * (Linux, also before the device files are made), the control device (a container given GPUs),
   * WSL2's GPU device.
   */
  static final List<Path> DRIVER_SIGNS =
      List.of(
          Path.of("/proc/driver/nvidia/version"), Path.of("/dev/nvidiactl"), Path.of("/dev/dxg"));

  /** Device 0 when CUDA sees one, else why not. */
  static DeviceChoice probeDevice() {
    return probeDevice(DRIVER_SIGNS);
  }

  /**
   * Device 0 when CUDA sees one, else why not. The first CUDA call loads cuDF's native code, which
   * unpacks about 400 MB of libraries into a temporary file (2 to 3 s of CPU): where none of {@code
   * driverSigns} exists no driver can answer, so it is not made.
   */
  static DeviceChoice probeDevice(List<Path> driverSigns) {
    if (driverSigns.stream().noneMatch(Files::exists)) {
      return new DeviceChoice(
          Optional.empty(),
          "no CUDA device is visible (no NVIDIA driver: none of "
              + driverSigns.stream().map(Path::toString).collect(Collectors.joining(", "))
              + " exists)");
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
}
