package dev.overlap.executor.device;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.CudaMemInfo;
import ai.rapids.cudf.HostMemoryBuffer;
import ai.rapids.cudf.PinnedMemoryPool;
import ai.rapids.cudf.Rmm;
import ai.rapids.cudf.RmmAllocationMode;
import dev.overlap.executor.config.ByteSize;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.pipeline.BoundedPool;
import dev.overlap.executor.pipeline.Closing;
import dev.overlap.executor.pipeline.DeviceBudget;
import dev.overlap.executor.pipeline.StagePipeline;
import java.util.ArrayList;
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
  private static final Logger LOG = LoggerFactory.getLogger(GpuRuntime.class);

  private final int device;
  private final OverlapConf conf;
  private final boolean ownsRmm;
  private final boolean ownsPinnedPool;
  private final StreamPair streams;
  private final BoundedPool<HostMemoryBuffer> staging;
  private final boolean stagingPinned;
  private final StagePipeline pipeline;
  private final Thread warmup;
  private boolean closed;

  private GpuRuntime(
      int device,
      OverlapConf conf,
      boolean ownsRmm,
      boolean ownsPinnedPool,
      StreamPair streams,
      BoundedPool<HostMemoryBuffer> staging,
      boolean stagingPinned,
      StagePipeline pipeline,
      Thread warmup) {
    this.device = device;
    this.conf = conf;
    this.ownsRmm = ownsRmm;
    this.ownsPinnedPool = ownsPinnedPool;
    this.streams = streams;
    this.staging = staging;
    this.stagingPinned = stagingPinned;
    this.pipeline = pipeline;
    this.warmup = warmup;
  }

  /**
   * Sets up the GPU. On failure, whatever was made is closed again and the exception propagates.
   */
  public static GpuRuntime start(int device, OverlapConf conf) {
    List<AutoCloseable> made = new ArrayList<>();
    try {
      Cuda.setDevice(device);
      boolean ownsRmm = false;
      if (Rmm.isInitialized()) {
        LOG.info("RMM already initialized (RAPIDS Accelerator?): reusing it");
      } else {
        CudaMemInfo mem = Cuda.memGetInfo();
        long pool = (long) (mem.free * conf.get(OverlapConf.RMM_POOL_FRACTION));
        pool = pool / (1L << 20) * (1L << 20);
        Rmm.initialize(RmmAllocationMode.POOL, null, pool);
        ownsRmm = true;
        LOG.info("RMM pool of {} on device {}", ByteSize.format(pool), device);
      }
      long bufferSize = conf.get(OverlapConf.STAGING_BUFFER_SIZE);
      int buffers = conf.get(OverlapConf.STAGING_BUFFERS);
      boolean ownsPinned = false;
      if (PinnedMemoryPool.isInitialized()) {
        LOG.info("pinned host pool already initialized: reusing it");
      } else {
        long size = conf.get(OverlapConf.PINNED_POOL_SIZE);
        if (size == 0) {
          // The staging buffers, and room for results coming back: as much as may be in flight.
          size = bufferSize * buffers + conf.get(OverlapConf.PREFETCH_MAX_BYTES);
        }
        PinnedMemoryPool.initialize(size);
        ownsPinned = true;
      }
      List<HostMemoryBuffer> bufs = new ArrayList<>();
      boolean pinned = true;
      for (int i = 0; i < buffers; i++) {
        HostMemoryBuffer b = PinnedMemoryPool.tryAllocate(bufferSize);
        if (b == null) {
          pinned = false;
          b = HostMemoryBuffer.allocate(bufferSize, false);
        }
        bufs.add(b);
        made.add(b);
      }
      if (!pinned) {
        LOG.warn(
            "the pinned host pool had no room for all staging buffers: some are pageable and their"
                + " copies will be several times slower (size the pool with {} or, beside RAPIDS,"
                + " spark.rapids.memory.pinnedPool.size)",
            OverlapConf.PINNED_POOL_SIZE.key());
      }
      BoundedPool<HostMemoryBuffer> staging = new BoundedPool<>(bufs);
      made.clear();
      made.add(staging);
      StreamPair streams = new StreamPair();
      made.add(streams);
      StagePipeline pipeline =
          new StagePipeline(
              new DeviceBudget(conf.get(OverlapConf.PREFETCH_MAX_BYTES)),
              "overlap",
              () -> Cuda.setDevice(device));
      pipeline.listener(new NvtxStages());
      Thread warmup = DecodeWarmup.start(device);
      return new GpuRuntime(
          device, conf, ownsRmm, ownsPinned, streams, staging, pinned, pipeline, warmup);
    } catch (RuntimeException | Error e) {
      java.util.Collections.reverse(made);
      Closing.after(e, made);
      throw e;
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

  /** Closes the pipeline, staging buffers and streams; then RMM and the pinned pool if ours. */
  @Override
  public synchronized void close() {
    if (closed) {
      throw new IllegalStateException("GpuRuntime closed twice");
    }
    closed = true;
    try {
      // It uses RMM: let it finish before RMM goes.
      warmup.join(60_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    List<AutoCloseable> steps = new ArrayList<>(List.of(pipeline, staging, streams));
    if (ownsPinnedPool) {
      steps.add(PinnedMemoryPool::shutdown);
    }
    if (ownsRmm) {
      steps.add(Rmm::shutdown);
    }
    Closing.all(steps);
  }
}
