package dev.overlap.executor.task;

import java.util.LinkedHashSet;
import java.util.List;
import org.apache.spark.util.AccumulatorV2;

/**
 * Distinct strings, in the order first added: the files whose decode faulted a GPU, which every
 * task that met the fault or read the file on the host because of it adds again. Spark's own {@code
 * CollectionAccumulator} would show each as often as tasks added it; this shows it once, as a list
 * (the stage page, the task table and the event log show {@code [a, b]}). A task's adds and the
 * driver's merges may come from several threads.
 */
public final class DistinctAccumulator extends AccumulatorV2<String, List<String>> {
  private static final long serialVersionUID = 1L;

  private final LinkedHashSet<String> values = new LinkedHashSet<>();

  @Override
  public synchronized boolean isZero() {
    return values.isEmpty();
  }

  @Override
  public synchronized DistinctAccumulator copy() {
    DistinctAccumulator c = new DistinctAccumulator();
    c.values.addAll(values);
    return c;
  }

  @Override
  public synchronized void reset() {
    values.clear();
  }

  @Override
  public synchronized void add(String v) {
    values.add(v);
  }

  @Override
  public void merge(AccumulatorV2<String, List<String>> other) {
    if (!(other instanceof DistinctAccumulator d)) {
      throw new UnsupportedOperationException(
          "cannot merge " + getClass().getSimpleName() + " with " + other.getClass().getName());
    }
    List<String> theirs = d.value();
    synchronized (this) {
      values.addAll(theirs);
    }
  }

  @Override
  public synchronized List<String> value() {
    return List.copyOf(values);
  }
}
