package dev.overlap.executor.pipeline;

import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.resource.TaskTag;

/**
 * One stage of one batch as a {@link StageListener} is told of it.
 *
 * @param task the task the batch belongs to
 * @param batch the batch's index in its task, from 0
 * @param bytes the batch's bytes: device bytes for the pipeline's stages; for packing 0 at the
 *     start and the packed bytes at the end
 * @param startNanos when the stage started ({@link System#nanoTime})
 */
public record StageRun(
    PipelineStage stage, TaskTag task, long batch, long bytes, long startNanos) {}
