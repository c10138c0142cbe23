package dev.overlap.executor.gpu;

import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.pipeline.BatchStages;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * A task's stages behind the executor's {@link GpuHealth}: a stage refuses to start once the GPU is
 * fenced ({@link GpuFencedException}, no device call made), and a fatal CUDA error a stage throws
 * fences it. What a stage leaves on the device is handed on as {@link OnDevice}, freed as usual
 * while the GPU works and left allocated once it is fenced: freeing it would call into a context
 * that the error left unusable (a leak until the process ends, not a crash).
 */
public final class FencedStages<
        H extends AutoCloseable,
        D extends AutoCloseable,
        O extends AutoCloseable,
        R extends AutoCloseable>
    implements BatchStages<H, FencedStages.OnDevice<D>, FencedStages.OnDevice<O>, R> {

  /** A value on the device: closing it frees it unless the GPU is fenced by then. */
  public static final class OnDevice<T extends AutoCloseable> implements AutoCloseable {
    private final T value;
    private final GpuHealth health;

    OnDevice(T value, GpuHealth health) {
      this.value = value;
      this.health = health;
    }

    @Override
    public void close() throws Exception {
      if (!health.fenced()) {
        value.close();
      }
    }
  }

  private final BatchStages<H, D, O, R> stages;
  private final GpuHealth health;

  private FencedStages(BatchStages<H, D, O, R> stages, GpuHealth health) {
    this.stages = stages;
    this.health = health;
  }

  public static <
          H extends AutoCloseable,
          D extends AutoCloseable,
          O extends AutoCloseable,
          R extends AutoCloseable>
      FencedStages<H, D, O, R> of(BatchStages<H, D, O, R> stages, GpuHealth health) {
    return new FencedStages<>(stages, health);
  }

  @Override
  public OnDevice<D> upload(H host) throws Exception {
    return new OnDevice<>(run(() -> stages.upload(host)), health);
  }

  @Override
  public OnDevice<O> compute(OnDevice<D> device) throws Exception {
    return new OnDevice<>(run(() -> stages.compute(device.value)), health);
  }

  @Override
  public R download(OnDevice<O> output) throws Exception {
    return run(() -> stages.download(output.value));
  }

  // The pipeline's out-of-memory handling and accounting go to the wrapped stages; once the GPU is
  // fenced nothing is split or retried.

  @Override
  public String outOfMemory(PipelineStage stage, Throwable failure) {
    return health.fenced() ? null : stages.outOfMemory(stage, failure);
  }

  @Override
  public List<H> splitHost(H host) {
    return health.fenced() ? List.of() : stages.splitHost(host);
  }

  @Override
  public List<OnDevice<D>> splitDevice(OnDevice<D> device) {
    if (health.fenced()) {
      return List.of();
    }
    List<OnDevice<D>> parts = new ArrayList<>();
    for (D part : stages.splitDevice(device.value)) {
      parts.add(new OnDevice<>(part, health));
    }
    return parts;
  }

  @Override
  public long outputBytes(OnDevice<O> output) {
    return stages.outputBytes(output.value);
  }

  @Override
  public long freeDeviceBytes() {
    return health.fenced() ? -1 : stages.freeDeviceBytes();
  }

  @Override
  public String describe(H host) {
    return stages.describe(host);
  }

  @Override
  public String doing(PipelineStage stage) {
    return stages.doing(stage);
  }

  private <T> T run(Callable<T> stage) throws Exception {
    health.ensureUsable();
    try {
      return stage.call();
    } catch (Exception | Error e) {
      health.check(e);
      throw e;
    }
  }
}
