package dev.overlap.executor.task;

import dev.overlap.executor.api.InputPath;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.api.PipelineStage;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.util.CollectionAccumulator;
import org.apache.spark.util.LongAccumulator;

/**
 * The {@link PipelineReport} behind the public view: Spark accumulators registered on the driver,
 * written by the job's tasks on the executors. They are unnamed, so that the stage page shows only
 * the call's {@link StageAccumulators}, fed from the same figures (a report may span several calls,
 * and its nanoseconds would only repeat those).
 */
public final class JobReport implements PipelineReport, TaskFigures {
  private static final long serialVersionUID = 1L;

  private final LongAccumulator rowsIn;
  private final LongAccumulator rowsOut;
  private final LongAccumulator batches;
  private final LongAccumulator bytesCopied;
  private final LongAccumulator gpuTasks;
  private final LongAccumulator cpuTasks;
  private final LongAccumulator stagingWait;
  private final LongAccumulator resultWait;
  private final LongAccumulator rapidsNanos;
  private final LongAccumulator cpuKernel;
  private final Map<PipelineStage, LongAccumulator> busy = new EnumMap<>(PipelineStage.class);
  private final Map<InputPath, LongAccumulator> pathTasks = new EnumMap<>(InputPath.class);
  private final LongAccumulator parquetFiles;
  private final LongAccumulator parquetRowGroups;
  private final LongAccumulator parquetBytes;
  private final LongAccumulator decode;
  private final CollectionAccumulator<String> fallbacks;
  private final DistinctAccumulator faults;
  private final LongAccumulator fellBack;

  /** Registers a fresh set of accumulators on the session's context. */
  public JobReport(SparkSession spark) {
    var sc = spark.sparkContext();
    rowsIn = sc.longAccumulator();
    rowsOut = sc.longAccumulator();
    batches = sc.longAccumulator();
    bytesCopied = sc.longAccumulator();
    gpuTasks = sc.longAccumulator();
    cpuTasks = sc.longAccumulator();
    stagingWait = sc.longAccumulator();
    resultWait = sc.longAccumulator();
    rapidsNanos = sc.longAccumulator();
    cpuKernel = sc.longAccumulator();
    for (PipelineStage s : PipelineStage.values()) {
      busy.put(s, sc.longAccumulator());
    }
    for (InputPath p : InputPath.values()) {
      pathTasks.put(p, sc.longAccumulator());
    }
    parquetFiles = sc.longAccumulator();
    parquetRowGroups = sc.longAccumulator();
    parquetBytes = sc.longAccumulator();
    decode = sc.longAccumulator();
    fallbacks = sc.collectionAccumulator();
    faults = new DistinctAccumulator();
    sc.register(faults);
    fellBack = sc.longAccumulator();
  }

  /**
   * What a task that decoded Parquet on the GPU read.
   *
   * @param files files (or parts of files) with at least one row group read
   * @param compressedBytes bytes of column chunks copied
   * @param decodeNanos time the GPU spent decoding them
   */
  public record ScanFigures(long files, long rowGroups, long compressedBytes, long decodeNanos) {}

  /** Adds one task's Parquet figures; called on the executor. */
  @Override
  public void addScan(ScanFigures f) {
    parquetFiles.add(f.files());
    parquetRowGroups.add(f.rowGroups());
    parquetBytes.add(f.compressedBytes());
    decode.add(f.decodeNanos());
  }

  /** Records why a task's Parquet input was decoded on the host; called on the executor. */
  private volatile String rapidsNotTaken;

  /** On the driver: why RAPIDS' device batches were not taken (null: they were, or no RAPIDS). */
  public void rapidsNotTaken(String reason) {
    rapidsNotTaken = reason;
  }

  @Override
  public java.util.Optional<String> rapidsNotTaken() {
    return java.util.Optional.ofNullable(rapidsNotTaken);
  }

  private volatile String pluginNotLoaded;
  private volatile String gpuNotTaken;

  /**
   * On the driver: a kernel was applied in a session without the plugin (checked while it is
   * planned).
   */
  public void markPluginNotLoaded(String setting) {
    pluginNotLoaded = setting;
  }

  @Override
  public java.util.Optional<String> pluginNotLoaded() {
    return java.util.Optional.ofNullable(pluginNotLoaded);
  }

  /** On the driver: the GPU does not take a kernel's schemas, so every task runs on the CPU. */
  public void markGpuNotTaken(String reason) {
    gpuNotTaken = reason;
  }

  @Override
  public java.util.Optional<String> gpuNotTaken() {
    return java.util.Optional.ofNullable(gpuNotTaken);
  }

  public void addFallback(String reason) {
    fallbacks.add(reason);
  }

  /**
   * One task's figures on the GPU path.
   *
   * @param busyNanos busy nanoseconds per stage spent on this task's batches
   * @param stagingWaitNanos time the task's thread waited for a free pinned staging buffer
   * @param resultWaitNanos time the task's thread waited for a result from the GPU
   * @param rapidsNanos time the task's thread waited for the RAPIDS Accelerator's device batches
   */
  public record GpuTask(
      InputPath path,
      long rowsIn,
      long rowsOut,
      long batches,
      long bytes,
      Map<PipelineStage, Long> busyNanos,
      long stagingWaitNanos,
      long resultWaitNanos,
      long rapidsNanos) {}

  /** Adds one task that ran on the GPU; called on the executor. */
  @Override
  public void addGpuTask(GpuTask t) {
    gpuTasks.add(1);
    pathTasks.get(t.path()).add(1);
    addGpuWork(t);
  }

  @Override
  public void addFellBack(GpuTask gpuPart) {
    fellBack.add(1);
    addGpuWork(gpuPart);
  }

  @Override
  public void addFault(String fault) {
    faults.add(fault);
  }

  /** A GPU task's figures but the task count. */
  private void addGpuWork(GpuTask t) {
    stagingWait.add(t.stagingWaitNanos());
    resultWait.add(t.resultWaitNanos());
    rapidsNanos.add(t.rapidsNanos());
    rowsIn.add(t.rowsIn());
    rowsOut.add(t.rowsOut());
    batches.add(t.batches());
    bytesCopied.add(t.bytes());
    t.busyNanos().forEach((s, n) -> busy.get(s).add(n));
  }

  /**
   * Adds one task that ran the kernel's CPU implementation; called on the executor.
   *
   * @param kernelNanos time the task's thread spent in the CPU kernel, reading the rows it pulls
   *     from its input included
   */
  @Override
  public void addCpuTask(long in, long out, long kernelNanos) {
    cpuTasks.add(1);
    rowsIn.add(in);
    rowsOut.add(out);
    cpuKernel.add(kernelNanos);
  }

  @Override
  public long rowsIn() {
    return rowsIn.value();
  }

  @Override
  public long rowsOut() {
    return rowsOut.value();
  }

  @Override
  public long batches() {
    return batches.value();
  }

  @Override
  public long bytesCopied() {
    return bytesCopied.value();
  }

  @Override
  public long gpuTasks() {
    return gpuTasks.value();
  }

  @Override
  public long cpuTasks() {
    return cpuTasks.value();
  }

  @Override
  public long cpuKernelNanos() {
    return cpuKernel.value();
  }

  @Override
  public long busyNanos(PipelineStage s) {
    return busy.get(s).value();
  }

  @Override
  public long gpuTasks(InputPath path) {
    return pathTasks.get(path).value();
  }

  @Override
  public long parquetFiles() {
    return parquetFiles.value();
  }

  @Override
  public long parquetRowGroups() {
    return parquetRowGroups.value();
  }

  @Override
  public long parquetCompressedBytes() {
    return parquetBytes.value();
  }

  @Override
  public long decodeNanos() {
    return decode.value();
  }

  @Override
  public List<String> parquetFallbacks() {
    Set<String> distinct = new TreeSet<>(fallbacks.value());
    return distinct.stream().limit(20).toList();
  }

  @Override
  public List<String> gpuFaults() {
    return faults.value();
  }

  @Override
  public long fellBackTasks() {
    return fellBack.value();
  }

  @Override
  public long stagingWaitNanos() {
    return stagingWait.value();
  }

  @Override
  public long resultWaitNanos() {
    return resultWait.value();
  }

  @Override
  public long rapidsBatchNanos() {
    return rapidsNanos.value();
  }
}
