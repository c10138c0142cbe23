package dev.overlap.executor.api;

import java.util.Optional;

/**
 * Whether this JVM's executor has a usable GPU, as decided when the plugin started; a GPU that a
 * fatal CUDA error has left unusable since is reported as {@link State#NO_GPU}, its reason naming
 * the error ({@code spark.overlap.gpu.onFatalError} says what the executor does then).
 *
 * @param state what the executor found
 * @param device the CUDA device ordinal in use, when {@code state} is {@link State#GPU}
 * @param reason why there is no GPU path, in words, when there is none
 */
@Public
public record GpuStatus(State state, Optional<Integer> device, String reason) {

  /** The three outcomes of executor start. */
  public enum State {
    /** The GPU pipeline runs. */
    GPU,
    /**
     * The plugin started but no GPU is usable (none visible, disabled by config, or failed since).
     */
    NO_GPU,
    /** The plugin is not running in this JVM: {@code spark.plugins} does not name it. */
    NOT_STARTED
  }

  public boolean gpu() {
    return state == State.GPU;
  }

  /** The status of the executor in this JVM. */
  public static GpuStatus current() {
    return Engine.get().status();
  }
}
