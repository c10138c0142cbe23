package dev.overlap.executor.pipeline;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * How the task path waits: it wakes every {@link #POLL_MILLIS} ms to check whether its task was
 * cancelled, and a wait longer than {@link #LOG_AFTER_NANOS} logs who holds what, once. A wait the
 * cancellation ends throws {@link WaitCancelledException} and leaves the interrupt flag alone; one
 * an interrupt ends throws a plain {@link InterruptedException}.
 */
public final class Waits {
  /** How often a waiting thread checks its cancellation condition. */
  public static final long POLL_MILLIS = 200;

  /** A wait this long logs what is held. */
  public static final long LOG_AFTER_NANOS = TimeUnit.SECONDS.toNanos(60);

  /** Never cancelled: the thread's interrupt flag alone ends the wait. */
  public static final BooleanSupplier NEVER = () -> false;

  private Waits() {}
}
