package dev.overlap.executor.resource;

/**
 * Who a batch belongs to, as a {@code StageListener} reports it: Spark's task attempt id and
 * partition (-1 when unknown, as in tests) and the name the task's lane was opened with.
 */
public record TaskTag(long taskId, int partition, String name) {
  /** A task known only by name. */
  public static TaskTag named(String name) {
    return new TaskTag(-1, -1, name);
  }
}
