package dev.overlap.executor.task;

import org.apache.spark.util.AccumulatorV2;

/**
 * A sum of nanoseconds that shows as whole milliseconds: tasks add their exact nanoseconds, and the
 * value (what the stage page, the task table and the event log show) is the sum's milliseconds,
 * rounded down once. So a stage's value is its job report's figure rounded to the millisecond, not
 * a sum of each task's rounding.
 */
public final class MillisAccumulator extends AccumulatorV2<Long, Long> {
  private static final long serialVersionUID = 1L;

  private long nanos;

  /** Adds {@code n} nanoseconds. */
  public void addNanos(long n) {
    nanos += n;
  }

  /** The exact sum, in nanoseconds. */
  public long nanos() {
    return nanos;
  }

  @Override
  public boolean isZero() {
    return nanos == 0;
  }

  @Override
  public MillisAccumulator copy() {
    MillisAccumulator c = new MillisAccumulator();
    c.nanos = nanos;
    return c;
  }

  @Override
  public void reset() {
    nanos = 0;
  }

  @Override
  public void add(Long n) {
    nanos += n;
  }

  @Override
  public void merge(AccumulatorV2<Long, Long> other) {
    if (!(other instanceof MillisAccumulator m)) {
      throw new UnsupportedOperationException(
          "cannot merge " + getClass().getSimpleName() + " with " + other.getClass().getName());
    }
    nanos += m.nanos;
  }

  @Override
  public Long value() {
    return nanos / 1_000_000;
  }
}
