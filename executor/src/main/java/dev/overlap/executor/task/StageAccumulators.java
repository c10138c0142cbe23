package dev.overlap.executor.task;

import dev.overlap.executor.api.PipelineStage;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkContext;
import org.apache.spark.util.AccumulatorV2;
import org.apache.spark.util.LongAccumulator;

/**
 * The named accumulators of one {@code GpuPartitions.map} or {@code write} call, registered on the
 * driver when the call is planned and shipped with its tasks' closure: Spark shows them on the
 * stage page (and each task's share in the task table), keeps them in the event log, and the
 * History Server shows them again. They are fed from the same per-task figures as the job's {@link
 * JobReport}, so that the two agree: a time is the report's nanoseconds rounded down to the
 * millisecond ({@link MillisAccumulator}), a count or a byte figure is the report's own.
 *
 * <p>A figure no task added to stays off the stage page (Spark shows no accumulator that a stage
 * did not update): a stage on the CPU path shows no copy or kernel times. A value is the call's
 * total over every stage that ran it so far: a Dataset that is computed twice (two actions, no
 * cache) shows the sum of both runs on the second stage.
 */
public final class StageAccumulators implements TaskFigures {
  private static final long serialVersionUID = 1L;

  public static final String TASKS_GPU = "overlap.tasks.gpu";

  public static final String TASKS_CPU = "overlap.tasks.cpu";
  public static final String TASKS_FELL_BACK = "overlap.tasks.fellBack";
  public static final String ROWS_IN = "overlap.rows.in";
  public static final String ROWS_OUT = "overlap.rows.out";
  public static final String BATCHES = "overlap.batches";
  public static final String COPY_IN_BYTES = "overlap.copyIn.bytes";
  public static final String PARQUET_BYTES = "overlap.parquet.compressedBytes";
  public static final String PACK_MS = "overlap.pack.ms";
  public static final String COPY_IN_MS = "overlap.copyIn.ms";
  public static final String COMPUTE_MS = "overlap.compute.ms";
  public static final String DECODE_MS = "overlap.decode.ms";
  public static final String COPY_BACK_MS = "overlap.copyBack.ms";
  public static final String STAGING_WAIT_MS = "overlap.wait.staging.ms";
  public static final String RESULT_WAIT_MS = "overlap.wait.results.ms";
  public static final String RAPIDS_MS = "overlap.rapids.ms";
  public static final String CPU_KERNEL_MS = "overlap.cpuKernel.ms";
  // Not a number: the faults, each once (a DistinctAccumulator).
  public static final String FAULTED_FILES = "overlap.faultedFiles";

  /** Every name, in the order docs/operations.md lists them. */
  public static final List<String> NAMES =
      List.of(
          TASKS_GPU,
          TASKS_CPU,
          TASKS_FELL_BACK,
          ROWS_IN,
          ROWS_OUT,
          BATCHES,
          COPY_IN_BYTES,
          PARQUET_BYTES,
          PACK_MS,
          COPY_IN_MS,
          COMPUTE_MS,
          DECODE_MS,
          COPY_BACK_MS,
          STAGING_WAIT_MS,
          RESULT_WAIT_MS,
          RAPIDS_MS,
          CPU_KERNEL_MS,
          FAULTED_FILES);

  private final Map<String, AccumulatorV2<Long, Long>> byName;
  private final DistinctAccumulator faults;

  private StageAccumulators(
      Map<String, AccumulatorV2<Long, Long>> byName, DistinctAccumulator faults) {
    this.byName = byName;
    this.faults = faults;
  }

  /** A fresh set registered on {@code sc}, on the driver. */
  public static StageAccumulators register(SparkContext sc) {
    Map<String, AccumulatorV2<Long, Long>> m = new LinkedHashMap<>();
    DistinctAccumulator faults = new DistinctAccumulator();
    sc.register(faults, FAULTED_FILES);
    for (String name : NAMES) {
      if (name.equals(FAULTED_FILES)) {
        continue;
      }
      AccumulatorV2<Long, Long> a =
          name.endsWith(".ms") ? new MillisAccumulator() : new LongAccumulator();
      sc.register(a, name);
      m.put(name, a);
    }
    return new StageAccumulators(m, faults);
  }

  /** The faults {@link #FAULTED_FILES} shows, each once. */
  public List<String> faults() {
    return faults.value();
  }

  /** The value Spark shows for {@code name}: a count, bytes, or whole milliseconds. */
  public long value(String name) {
    return byName.get(name).value();
  }

  private void add(String name, long v) {
    if (v != 0) {
      byName.get(name).add(v);
    }
  }

  /** The accumulator of a stage of the pipeline's figures. */
  private static String busyName(PipelineStage s) {
    return switch (s) {
      case PACK -> PACK_MS;
      case UPLOAD -> COPY_IN_MS;
      case COMPUTE -> COMPUTE_MS;
      case DOWNLOAD -> COPY_BACK_MS;
    };
  }

  @Override
  public void addGpuTask(JobReport.GpuTask t) {
    add(TASKS_GPU, 1);
    addGpuWork(t);
  }

  @Override
  public void addFellBack(JobReport.GpuTask gpuPart) {
    add(TASKS_FELL_BACK, 1);
    addGpuWork(gpuPart);
  }

  @Override
  public void addFault(String fault) {
    faults.add(fault);
  }

  /** A GPU task's figures but the task count. */
  private void addGpuWork(JobReport.GpuTask t) {
    add(ROWS_IN, t.rowsIn());
    add(ROWS_OUT, t.rowsOut());
    add(BATCHES, t.batches());
    add(COPY_IN_BYTES, t.bytes());
    t.busyNanos().forEach((s, n) -> add(busyName(s), n));
    add(STAGING_WAIT_MS, t.stagingWaitNanos());
    add(RESULT_WAIT_MS, t.resultWaitNanos());
    add(RAPIDS_MS, t.rapidsNanos());
  }

  @Override
  public void addScan(JobReport.ScanFigures f) {
    add(PARQUET_BYTES, f.compressedBytes());
    add(DECODE_MS, f.decodeNanos());
  }

  @Override
  public void addCpuTask(long rowsIn, long rowsOut, long kernelNanos) {
    add(TASKS_CPU, 1);
    add(ROWS_IN, rowsIn);
    add(ROWS_OUT, rowsOut);
    add(CPU_KERNEL_MS, kernelNanos);
  }
}
