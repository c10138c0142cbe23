package dev.overlap.executor.api;

import dev.overlap.executor.pipeline.Stage;
import java.io.Serializable;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.util.LongAccumulator;

/**
 * What the pipeline did for one {@link GpuPartitions#map} call, summed over its tasks through Spark
 * accumulators: rows, batches, bytes copied, and the time each stage spent on this job's batches;
 * for tasks that ran the kernel's CPU implementation, their number and the time spent in it. Read
 * it after an action has run the Dataset.
 */
@Public
public final class PipelineReport implements Serializable {
  private final LongAccumulator rowsIn;
  private final LongAccumulator rowsOut;
  private final LongAccumulator batches;
  private final LongAccumulator bytesCopied;
  private final LongAccumulator gpuTasks;
  private final LongAccumulator cpuTasks;
  private final LongAccumulator stagingWait;
  private final LongAccumulator resultWait;
  private final LongAccumulator cpuKernel;
  private final Map<Stage, LongAccumulator> busy = new EnumMap<>(Stage.class);

  private PipelineReport(SparkSession spark) {
    var sc = spark.sparkContext();
    rowsIn = sc.longAccumulator("overlap.rowsIn");
    rowsOut = sc.longAccumulator("overlap.rowsOut");
    batches = sc.longAccumulator("overlap.batches");
    bytesCopied = sc.longAccumulator("overlap.bytesCopied");
    gpuTasks = sc.longAccumulator("overlap.gpuTasks");
    cpuTasks = sc.longAccumulator("overlap.cpuTasks");
    stagingWait = sc.longAccumulator("overlap.waitNanos.staging");
    resultWait = sc.longAccumulator("overlap.waitNanos.results");
    cpuKernel = sc.longAccumulator("overlap.busyNanos.cpuKernel");
    for (Stage s : Stage.values()) {
      busy.put(s, sc.longAccumulator("overlap.busyNanos." + s.name().toLowerCase(Locale.ROOT)));
    }
  }

  /** Registers a fresh set of accumulators on the session's context. */
  public static PipelineReport create(SparkSession spark) {
    return new PipelineReport(spark);
  }

  // ---- recorded on executors ---------------------------------------------------------------

  /**
   * Adds one task's figures; called on the executor.
   *
   * @param nanos busy nanoseconds per stage spent on this task's batches
   * @param waitStagingNanos time the task's thread waited for a free pinned staging buffer
   * @param waitResultsNanos time the task's thread waited for a result from the GPU
   */
  public void addTask(
      boolean gpu,
      long in,
      long out,
      long batchCount,
      long bytes,
      Map<Stage, Long> nanos,
      long waitStagingNanos,
      long waitResultsNanos) {
    (gpu ? gpuTasks : cpuTasks).add(1);
    stagingWait.add(waitStagingNanos);
    resultWait.add(waitResultsNanos);
    rowsIn.add(in);
    rowsOut.add(out);
    batches.add(batchCount);
    bytesCopied.add(bytes);
    nanos.forEach((s, n) -> busy.get(s).add(n));
  }

  /**
   * Adds one task that ran the kernel's CPU implementation; called on the executor.
   *
   * @param kernelNanos time the task's thread spent in the CPU kernel, reading the rows it pulls
   *     from its input included
   */
  public void addCpuTask(long in, long out, long kernelNanos) {
    cpuTasks.add(1);
    rowsIn.add(in);
    rowsOut.add(out);
    cpuKernel.add(kernelNanos);
  }

  // ---- read on the driver ------------------------------------------------------------------

  public long rowsIn() {
    return rowsIn.value();
  }

  public long rowsOut() {
    return rowsOut.value();
  }

  public long batches() {
    return batches.value();
  }

  public long bytesCopied() {
    return bytesCopied.value();
  }

  public long gpuTasks() {
    return gpuTasks.value();
  }

  public long cpuTasks() {
    return cpuTasks.value();
  }

  /**
   * Summed time the CPU tasks' threads spent in the kernel's CPU implementation, reading the rows
   * it pulls from its input included.
   */
  public long cpuKernelNanos() {
    return cpuKernel.value();
  }

  /** Summed busy nanoseconds of a stage over this job's batches. */
  public long busyNanos(Stage s) {
    return busy.get(s).value();
  }

  /** Summed time the task threads waited for a free pinned staging buffer. */
  public long stagingWaitNanos() {
    return stagingWait.value();
  }

  /** Summed time the task threads waited for results from the GPU. */
  public long resultWaitNanos() {
    return resultWait.value();
  }

  /** A stage's busy seconds; packing's divided by the number of threads that pack at once. */
  private double stageSeconds(Stage s, int packingThreads) {
    return busyNanos(s) / 1e9 / (s == Stage.PACK ? Math.max(1, packingThreads) : 1);
  }

  /** The busiest stage, packing counted per thread (see {@link #stageSummary}). */
  public Stage bottleneck(int packingThreads) {
    Stage worst = Stage.PACK;
    for (Stage s : Stage.values()) {
      if (stageSeconds(s, packingThreads) > stageSeconds(worst, packingThreads)) {
        worst = s;
      }
    }
    return worst;
  }

  /** {@code max(stage busy) / wall}, packing counted per thread (see {@link #stageSummary}). */
  public double efficiency(long wallNanos, int packingThreads) {
    return stageSeconds(bottleneck(packingThreads), packingThreads) / (wallNanos / 1e9);
  }

  /** True when at least one task ran on the GPU and none on the CPU. */
  public boolean ranOnGpu() {
    return gpuTasks() > 0 && cpuTasks() == 0;
  }

  /**
   * Stage figures against a wall time: busy seconds per stage, the bottleneck (the busiest stage),
   * and the efficiency {@code max(stage busy) / wall}. Packing runs on several task threads at
   * once; its busy time is divided by {@code packingThreads}. The upload stage's busy time is the
   * time its thread spent issuing copies and waiting for the copy before (see {@code
   * CudfStages#upload}): close to the copy engine's busy time when uploads queue up, less when they
   * do not.
   */
  public String stageSummary(long wallNanos, int packingThreads) {
    StringBuilder sb = new StringBuilder();
    for (Stage s : Stage.values()) {
      sb.append(
          String.format(
              Locale.ROOT, "  %-15s %8.3f s busy%n", s.label(), stageSeconds(s, packingThreads)));
    }
    Stage bottleneck = bottleneck(packingThreads);
    double worst = stageSeconds(bottleneck, packingThreads);
    int threads = Math.max(1, packingThreads);
    sb.append(
        String.format(
            Locale.ROOT,
            "  task threads    %8.3f s waiting for a staging buffer, %.3f s for GPU results"
                + " (each per thread)%n",
            stagingWaitNanos() / 1e9 / threads,
            resultWaitNanos() / 1e9 / threads));
    double wall = wallNanos / 1e9;
    sb.append(
        String.format(
            Locale.ROOT,
            "  wall            %8.3f s%n  efficiency      %8.3f (max stage busy / wall);"
                + " bottleneck: %s%n  copied          %.2f GB%n",
            wall,
            worst / wall,
            bottleneck.label(),
            bytesCopied() / 1e9));
    return sb.toString();
  }
}
