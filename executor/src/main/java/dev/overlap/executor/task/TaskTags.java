package dev.overlap.executor.task;

import dev.overlap.executor.resource.TaskTag;
import org.apache.spark.TaskContext;

/** How a Spark task shows in stage listeners and the timeline. */
public final class TaskTags {
  private TaskTags() {}

  /**
   * The task of {@code ctx}, named "stage S partition P task T"; "task" with unknown ids when
   * {@code ctx} is null (outside a Spark task).
   */
  static TaskTag of(TaskContext ctx) {
    if (ctx == null) {
      return TaskTag.named("task");
    }
    return new TaskTag(
        ctx.taskAttemptId(),
        ctx.partitionId(),
        "stage "
            + ctx.stageId()
            + " partition "
            + ctx.partitionId()
            + " task "
            + ctx.taskAttemptId());
  }
}
