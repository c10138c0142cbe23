package dev.overlap.executor.api;

import java.io.Serializable;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.apache.spark.sql.SparkSession;

/**
 * What the pipeline did for one {@link GpuPartitions#map} call, summed over its tasks through Spark
 * accumulators: rows, batches, bytes copied, and the time each stage spent on this job's batches;
 * for tasks that ran the kernel's CPU implementation, their number and the time spent in it. Read
 * it after an action has run the Dataset. A read-only view: the executors write to it through the
 * plugin's own implementation.
 */
@Public
public interface PipelineReport extends Serializable {

  /** Registers a fresh set of accumulators on the session's context. */
  static PipelineReport create(SparkSession spark) {
    return Engine.get().newReport(spark);
  }

  long rowsIn();

  long rowsOut();

  long batches();

  long bytesCopied();

  long gpuTasks();

  long cpuTasks();

  /**
   * Summed time the CPU tasks' threads spent in the kernel's CPU implementation, reading the rows
   * it pulls from its input included.
   */
  long cpuKernelNanos();

  /** Summed busy nanoseconds of a stage over this job's batches. */
  long busyNanos(PipelineStage s);

  /** Tasks on the GPU path whose input reached the device by {@code path}. */
  long gpuTasks(InputPath path);

  /** Parquet files (or parts of files) the GPU decoded. */
  long parquetFiles();

  /** Parquet row groups the GPU decoded. */
  long parquetRowGroups();

  /** Compressed bytes of Parquet column chunks copied to the GPU. */
  long parquetCompressedBytes();

  /** Summed time the GPU spent decoding Parquet for this job. */
  long decodeNanos();

  /**
   * Why tasks whose input was a Parquet scan were decoded on the host instead of the GPU: each
   * reason once, at most 20, each naming the file and column at fault.
   */
  List<String> parquetFallbacks();

  /**
   * Files whose decode failed fatally on a GPU (an illegal memory access in cuDF's reader, say),
   * each once with the fault: met by one of the job's tasks, or why one read the file on the host.
   * Such a file is read on the host from then on. Empty when none.
   */
  default List<String> gpuFaults() {
    return List.of();
  }

  /**
   * Tasks that began on the GPU and, the GPU having failed fatally, went on to their end on the
   * kernel's CPU implementation: counted among {@link #cpuTasks}, not {@link #gpuTasks}.
   */
  default long fellBackTasks() {
    return 0;
  }

  /**
   * Beside the RAPIDS Accelerator: why the kernel's input was not taken from its device batches;
   * empty when it was, or when RAPIDS is not in {@code spark.plugins}.
   */
  Optional<String> rapidsNotTaken();

  /**
   * Empty when the session runs the Overlap plugin. When a kernel this report records was applied
   * in a session whose {@code spark.plugins} does not list it, no executor set up a GPU pipeline
   * and its tasks ran on the CPU path: then the setting that loads the plugin.
   */
  Optional<String> pluginNotLoaded();

  /**
   * Empty when the GPU takes the input and output schemas of the kernels this report records.
   * Otherwise why not (the columns of types the GPU does not take yet, such as arrays, structs,
   * maps and binary): their tasks ran the kernel's CPU implementation on every executor.
   */
  Optional<String> gpuNotTaken();

  /** Summed time the task threads waited for a free pinned staging buffer. */
  long stagingWaitNanos();

  /** Summed time the task threads waited for results from the GPU. */
  long resultWaitNanos();

  /**
   * Beside the RAPIDS Accelerator: summed time the task threads spent getting its device batches:
   * its operators (a scan among them) run on those threads, its GPU admission, the cast to the
   * kernel's input types. None of it is packing.
   */
  long rapidsBatchNanos();

  /** A stage's busy seconds; packing's divided by the number of threads that pack at once. */
  private double stageSeconds(PipelineStage s, int packingThreads) {
    return busyNanos(s) / 1e9 / (s == PipelineStage.PACK ? Math.max(1, packingThreads) : 1);
  }

  /**
   * The busiest stage of the GPU pipeline, packing counted per thread (see {@link #stageSummary});
   * only GPU tasks have stages, so it says nothing when {@link #gpuTasks} is 0.
   */
  default PipelineStage bottleneck(int packingThreads) {
    PipelineStage worst = PipelineStage.PACK;
    for (PipelineStage s : PipelineStage.values()) {
      if (stageSeconds(s, packingThreads) > stageSeconds(worst, packingThreads)) {
        worst = s;
      }
    }
    return worst;
  }

  /** {@code max(stage busy) / wall}, packing counted per thread (see {@link #stageSummary}). */
  default double efficiency(long wallNanos, int packingThreads) {
    return stageSeconds(bottleneck(packingThreads), packingThreads) / (wallNanos / 1e9);
  }

  /** True when at least one task ran on the GPU and none on the CPU. */
  default boolean ranOnGpu() {
    return gpuTasks() > 0 && cpuTasks() == 0;
  }

  /**
   * Stage figures against a wall time: busy seconds per stage, the bottleneck (the busiest stage),
   * and the efficiency {@code max(stage busy) / wall}. Packing runs on several task threads at
   * once; its busy time is divided by {@code packingThreads}. The upload stage's busy time is the
   * time its thread spent issuing copies and waiting for the copy before (see the upload stage in
   * docs/architecture.md): close to the copy engine's busy time when uploads queue up, less when
   * they do not. Tasks that ran the kernel's CPU implementation get their own line, their kernel
   * time divided by {@code packingThreads} as well; when every task did (no GPU stage ran), the
   * summary says so and gives their figures instead of the stages, naming the setting when the
   * plugin was not loaded ({@link #pluginNotLoaded}).
   */
  default String stageSummary(long wallNanos, int packingThreads) {
    int threads = Math.max(1, packingThreads);
    double wall = wallNanos / 1e9;
    if (gpuTasks() == 0) {
      StringBuilder sb = new StringBuilder();
      if (cpuTasks() == 0) {
        sb.append("  no task has reported: run an action on the Dataset first\n");
      } else {
        sb.append(
            String.format(
                Locale.ROOT,
                "  path            CPU: %d %s ran the kernel's CPU implementation, none the GPU"
                    + " pipeline%s%n",
                cpuTasks(),
                cpuTasks() == 1 ? "task" : "tasks",
                pluginNotLoaded().map(set -> " (plugin not loaded: set " + set + ")").orElse("")));
        sb.append(cpuLine(threads));
        sb.append(
            String.format(Locale.ROOT, "  rows            %,d in, %,d out%n", rowsIn(), rowsOut()));
      }
      sb.append(String.format(Locale.ROOT, "  wall            %8.3f s%n", wall));
      return sb.append(faultLines()).toString();
    }
    StringBuilder sb = new StringBuilder();
    for (PipelineStage s : PipelineStage.values()) {
      sb.append(
          String.format(
              Locale.ROOT, "  %-15s %8.3f s busy%n", s.label(), stageSeconds(s, packingThreads)));
    }
    PipelineStage bottleneck = bottleneck(packingThreads);
    double worst = stageSeconds(bottleneck, packingThreads);
    sb.append(
        String.format(
            Locale.ROOT,
            "  task threads    %8.3f s waiting for a staging buffer, %.3f s for GPU results"
                + " (each per thread)%n",
            stagingWaitNanos() / 1e9 / threads,
            resultWaitNanos() / 1e9 / threads));
    if (cpuTasks() > 0) {
      sb.append(cpuLine(threads));
    }
    sb.append(
        String.format(
            Locale.ROOT,
            "  wall            %8.3f s%n  efficiency      %8.3f (max stage busy / wall);"
                + " bottleneck: %s%n  copied          %.2f GB%n",
            wall,
            worst / wall,
            bottleneck.label(),
            bytesCopied() / 1e9));
    return sb.append(faultLines()).toString();
  }

  /** The lines of {@link #stageSummary} naming each GPU fault once, and the tasks it sent back. */
  private String faultLines() {
    StringBuilder sb = new StringBuilder();
    for (String f : gpuFaults()) {
      sb.append("  GPU fault       ").append(f).append('\n');
    }
    if (fellBackTasks() > 0) {
      sb.append(
          String.format(
              Locale.ROOT,
              "  fell back       %d of the CPU %s began on the GPU and went on on the CPU after"
                  + " a fatal GPU error%n",
              fellBackTasks(),
              cpuTasks() == 1 ? "task" : "tasks"));
    }
    return sb.toString();
  }

  /** The CPU tasks' line of {@link #stageSummary}. */
  private String cpuLine(int threads) {
    return String.format(
        Locale.ROOT,
        "  CPU kernel      %8.3f s busy (%d %s, %.3f s summed over them, reading their input"
            + " included)%n",
        cpuKernelNanos() / 1e9 / threads,
        cpuTasks(),
        cpuTasks() == 1 ? "task" : "tasks",
        cpuKernelNanos() / 1e9);
  }
}
