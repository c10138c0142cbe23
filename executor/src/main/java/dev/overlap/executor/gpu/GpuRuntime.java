package dev.overlap.executor.gpu;

import ai.rapids.cudf.HostMemoryBuffer;
import ai.rapids.cudf.Rmm;
import dev.overlap.executor.config.ByteSize;
import dev.overlap.executor.config.GpuKeys;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.pipeline.BoundedPool;
import dev.overlap.executor.pipeline.DeviceBudget;
import dev.overlap.executor.pipeline.StagePipeline;
import dev.overlap.executor.resource.Closing;
import dev.overlap.executor.resource.PinnedShare;
import dev.overlap.executor.trace.Diagnostics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything one executor holds on its GPU: RMM (reused when already initialized, for example by
 * the RAPIDS Accelerator), cuDF's pinned host pool (likewise), the {@link StreamPair}, the pinned
 * staging buffers and the executor-wide {@link StagePipeline}.
 *
 * <p>Made once in the executor plugin's {@code init}, closed once in its {@code shutdown}, in the
 * reverse order of creation. Device memory of batches is freed at task end, never here.
 */
public final class GpuRuntime implements AutoCloseable {
  /** Start-up times: to the run's log only, not to the terminal. */
  private static final Logger TIMES = Diagnostics.logger(GpuRuntime.class);

  private static final Logger LOG = LoggerFactory.getLogger(GpuRuntime.class);

  private final int device;
  private final OverlapConf conf;
  private final StreamPair streams;
  private final BoundedPool<HostMemoryBuffer> staging;
  private final boolean stagingPinned;
  private final StagePipeline pipeline;
  private final Thread warmup;
  private final GpuHealth health;
  // What start made, in the order it made it: RMM's and the pinned pool's shutdown when this
  // runtime initialized them, the staging pool, the streams, the pipeline.
  private final List<AutoCloseable> made;
  private final TaskUsers tasks;
  private boolean closed;

  private GpuRuntime(
      int device,
      OverlapConf conf,
      StreamPair streams,
      BoundedPool<HostMemoryBuffer> staging,
      boolean stagingPinned,
      StagePipeline pipeline,
      Thread warmup,
      GpuHealth health,
      List<AutoCloseable> made,
      Duration tasksGiveUp) {
    this.device = device;
    this.conf = conf;
    this.streams = streams;
    this.staging = staging;
    this.stagingPinned = stagingPinned;
    this.pipeline = pipeline;
    this.warmup = warmup;
    this.health = health;
    this.made = List.copyOf(made);
    this.tasks = new TaskUsers(tasksGiveUp);
  }

  /**
   * Sets up the GPU. On failure, whatever was made is closed again in the reverse order of creation
   * (the pinned pool and RMM shut down when this runtime initialized them) and the exception
   * propagates; when a pipeline thread is still running after the pipeline's close, nothing made
   * before the pipeline is freed (see {@link #close}).
   *
   * @param health the GPU's health, which a fatal CUDA error ({@link FencedStages}) or a stage
   *     stalled past {@code spark.overlap.gpu.stallTimeout} fences
   */
  public static GpuRuntime start(int device, OverlapConf conf, GpuHealth health) {
    return start(device, conf, health, NativeSteps.CUDF, StagePipeline.CLOSE_GIVE_UP);
  }

  /**
   * As above; the pipeline's close, on failure and in {@link #close}, waits at most {@code
   * pipelineGiveUp} for its threads, and {@link #close} as long (at most {@code TaskUsers.GIVE_UP})
   * for the tasks still using the runtime.
   */
  static GpuRuntime start(
      int device,
      OverlapConf conf,
      GpuHealth health,
      NativeSteps natives,
      Duration pipelineGiveUp) {
    // In the order of creation; closed in reverse on failure, and by close().
    List<AutoCloseable> made = new ArrayList<>();
    StartSteps steps = new StartSteps();
    try {
      natives.setDevice(device);
      steps.done("device");
      if (natives.rmmInitialized()) {
        LOG.info("RMM already initialized (RAPIDS Accelerator?): reusing it");
      } else {
        long pool = (long) (natives.freeDeviceBytes() * conf.get(OverlapConf.RMM_POOL_FRACTION));
        pool = pool / (1L << 20) * (1L << 20);
        natives.initRmm(pool);
        made.add(natives::shutdownRmm);
        LOG.info("RMM pool of {} on device {}", ByteSize.format(pool), device);
      }
      steps.done("RMM pool");
      long bufferSize = conf.get(OverlapConf.STAGING_BUFFER_SIZE);
      int buffers = conf.get(OverlapConf.STAGING_BUFFERS);
      long poolSize = -1; // unknown: another plugin made the pool
      if (natives.pinnedInitialized()) {
        LOG.info("pinned host pool already initialized: reusing it");
      } else {
        long size = conf.get(OverlapConf.PINNED_POOL_SIZE);
        if (size == 0) {
          // The staging buffers, and room for results coming back: as much as may be in flight.
          size = bufferSize * buffers + conf.get(OverlapConf.PREFETCH_MAX_BYTES);
        }
        natives.initPinned(size);
        made.add(natives::shutdownPinned);
        poolSize = size;
      }
      steps.done("pinned pool");
      List<HostMemoryBuffer> bufs = new ArrayList<>();
      made.add(() -> Closing.all(bufs)); // until the pool owns them
      boolean pinned = true;
      long stagingPinned = 0;
      for (int i = 0; i < buffers; i++) {
        HostMemoryBuffer b = natives.tryPinned(bufferSize);
        if (b == null) {
          pinned = false;
          b = natives.pageable(bufferSize);
        } else {
          stagingPinned += bufferSize;
        }
        bufs.add(b);
      }
      if (!pinned) {
        LOG.warn(
            "the pinned host pool had no room for all staging buffers: some are pageable and their"
                + " copies will be several times slower (size the pool with {} or, beside RAPIDS,"
                + " spark.rapids.memory.pinnedPool.size)",
            OverlapConf.PINNED_POOL_SIZE.key());
      }
      steps.done("staging buffers");
      BoundedPool<HostMemoryBuffer> staging = new BoundedPool<>(bufs);
      made.set(made.size() - 1, staging); // the pool owns the buffers now
      if (poolSize >= 0) {
        // The rest of the pool this plugin made is for results and large row groups: past it they
        // take pageable memory without asking the pool (whose refusals print error lines).
        PinnedShare.limit(Math.max(0, poolSize - stagingPinned));
        made.add(PinnedShare::unlimited);
      }
      StreamPair streams = natives.streams();
      made.add(() -> natives.closeStreams(streams));
      steps.done("streams");
      StagePipeline pipeline =
          new StagePipeline(
              new DeviceBudget(conf.get(OverlapConf.PREFETCH_MAX_BYTES)),
              new StagePipeline.Threads(
                  "overlap",
                  () -> natives.setDevice(device),
                  conf.get(OverlapConf.COMPUTE_THREADS),
                  conf.get(OverlapConf.DOWNLOAD_THREADS),
                  StagePipeline.CLOSE_LOG_EVERY.compareTo(pipelineGiveUp) < 0
                      ? StagePipeline.CLOSE_LOG_EVERY
                      : pipelineGiveUp,
                  pipelineGiveUp));
      made.add(pipeline);
      pipeline.listener(new NvtxStages());
      pipeline.watchStalls(
          conf.get(GpuKeys.STALL_TIMEOUT), GpuKeys.stallBound(conf), health::stalled);
      steps.done("pipeline threads");
      Thread warmup = natives.startWarmup(device);
      steps.done("decode warm-up started");
      TIMES.info("{} (the warm-up decodes on its own thread)", steps.line(device));
      return new GpuRuntime(
          device, conf, streams, staging, pinned, pipeline, warmup, health, made, pipelineGiveUp);
    } catch (RuntimeException | Error e) {
      Collections.reverse(made);
      rollBack(e, made, device);
      throw e;
    }
  }

  /**
   * Closes what a failed {@link #start} made, newest first, attaching what the closes throw to
   * {@code failure}. The pipeline comes first; when one of its threads is still running after the
   * pipeline's close gave up waiting for it, nothing older is freed: that thread may be in a call
   * using it (a leak until the process exits rather than memory freed under it).
   */
  private static void rollBack(Throwable failure, List<AutoCloseable> newestFirst, int device) {
    for (AutoCloseable c : newestFirst) {
      Closing.after(failure, List.of(c));
      if (c instanceof StagePipeline p && !p.threadsEnded()) {
        LOG.error(
            "a pipeline thread is still running on GPU {} after its start failed: its streams,"
                + " staging buffers and memory pools are left allocated rather than freed under it",
            device);
        return;
      }
    }
  }

  public int device() {
    return device;
  }

  public OverlapConf conf() {
    return conf;
  }

  public StreamPair streams() {
    return streams;
  }

  public BoundedPool<HostMemoryBuffer> staging() {
    return staging;
  }

  public boolean stagingPinned() {
    return stagingPinned;
  }

  public StagePipeline pipeline() {
    return pipeline;
  }

  public GpuHealth health() {
    return health;
  }

  /** The tasks using this runtime from their own threads, which {@link #close} waits for. */
  public TaskUsers tasks() {
    return tasks;
  }

  /**
   * Closes what {@link #start} made in the reverse order: the pipeline, the streams, the staging
   * buffers, then the pinned pool and RMM if this runtime initialized them. When a pipeline thread
   * or the decode warm-up is still running after its wait, only the pipeline is closed: the rest
   * stays allocated until the process exits, since that thread may be inside a CUDA call using it.
   * So does it once the GPU is fenced: the context is broken, and freeing into it could crash; and
   * while a task still uses it after a wait ({@link TaskUsers}).
   */
  @Override
  public synchronized void close() {
    if (closed) {
      throw new IllegalStateException("GpuRuntime closed twice");
    }
    closed = true;
    // What is still held when no task runs: every figure but RMM's is Overlap's alone. Only a log
    // line: its failure must not stop the close.
    try {
      LOG.info(
          "Overlap: GPU {} at shutdown: device budget in use {} bytes, staging buffers free {} of"
              + " {}, RMM bytes allocated {}",
          device,
          pipeline.budget().inFlight(),
          staging.available(),
          conf.get(OverlapConf.STAGING_BUFFERS),
          Rmm.isInitialized() ? Rmm.getTotalBytesAllocated() : 0);
    } catch (RuntimeException e) {
      LOG.warn("Overlap: GPU {} at shutdown: its figures could not be read", device, e);
    }
    try {
      // It uses RMM: let it finish before RMM goes.
      warmup.join(60_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    pipeline.close();
    if (health.fenced()) {
      LOG.warn(
          "{}: its streams, staging buffers and memory pools are left allocated, not freed into"
              + " the broken CUDA context",
          health.reason().orElseThrow());
      return;
    }
    if (warmup.isAlive() || !pipeline.threadsEnded()) {
      LOG.error(
          "{} still running on GPU {}: its streams, staging buffers and memory pools are left"
              + " allocated rather than freed under it",
          warmup.isAlive() ? warmup.getName() : "a pipeline thread",
          device);
      return;
    }
    if (!tasks.closeAndAwait(device)) {
      return;
    }
    List<AutoCloseable> rest = new ArrayList<>(made);
    rest.remove(pipeline);
    Collections.reverse(rest);
    Closing.all(rest);
  }
}
