package dev.overlap.executor.pipeline;

/**
 * A wait of the task path ended by its cancellation condition (the task was killed, the GPU was
 * fenced), not by an interrupt: the thread's interrupt flag is left as it was. Whoever catches it
 * must not set the flag again as after an {@link InterruptedException} the interrupt threw (which
 * cleared the flag): no one interrupted the thread.
 */
public final class WaitCancelledException extends InterruptedException {
  private static final long serialVersionUID = 1L;

  public WaitCancelledException(String message) {
    super(message);
  }

  /** Whether {@code e} came from an interrupt, whose flag the catcher is to set again. */
  public static boolean byInterrupt(InterruptedException e) {
    return !(e instanceof WaitCancelledException);
  }
}
