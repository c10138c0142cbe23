package dev.overlap.executor.plan;

import dev.overlap.executor.api.GpuKernel;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.config.JobSettings;
import dev.overlap.executor.config.NoGpuMode;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.config.UnknownKeys;
import dev.overlap.executor.task.JobReport;
import dev.overlap.executor.task.PartitionRunner;
import dev.overlap.executor.task.StageAccumulators;
import dev.overlap.executor.types.ColumnType;
import dev.overlap.executor.types.UnsupportedColumnException;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every job a kernel is applied to checks and settles on the driver before its input is
 * planned, whatever its output: both schemas, the session's keys, the plugin, the job's settings
 * and the runner its tasks carry, with the call's stage accumulators.
 *
 * @param report the job's report; null when the caller passed none
 */
record JobSetup(
    org.apache.spark.sql.classic.Dataset<Row> ds,
    StructType in,
    StructType out,
    Function<String, String> sparkConf,
    OverlapConf job,
    JobReport report,
    PartitionRunner runner) {
  private static final Logger LOG = LoggerFactory.getLogger(JobSetup.class);

  static JobSetup of(Dataset<Row> input, GpuKernel kernel, PipelineReport report) {
    JobReport writer = report == null ? null : jobReport(report);
    StructType in = input.schema();
    org.apache.spark.sql.classic.Dataset<Row> ds =
        (org.apache.spark.sql.classic.Dataset<Row>) input;
    // A key the job set on the session with a typo fails here as it would at start.
    UnknownKeys.check(
        scala.jdk.javaapi.CollectionConverters.asJava(ds.sparkSession().conf().getAll().keySet()));
    // Keys that are not startup-only are taken from the session, so a job can set them.
    Function<String, String> sparkConf =
        k -> ds.sparkSession().conf().getOption(k).getOrElse(() -> null);
    PluginCheck.check(sparkConf, kernel.name(), writer);
    Map<String, String> settings = JobSettings.from(sparkConf);
    OverlapConf job = OverlapConf.fromMap(settings);
    // The input is checked before the kernel is asked for its output schema, which it may not
    // know for columns it was not written for.
    Optional<String> notTakenIn = gpuNotTaken(kernel, in, "input of ", job);
    StructType out = kernel.outputSchema(in);
    String notTaken =
        notTakenIn.or(() -> gpuNotTaken(kernel, out, "output schema of ", job)).orElse(null);
    if (notTaken != null) {
      String cols =
          ColumnType.unsupportedColumns(in)
              .map(c -> c + " of its input")
              .orElseGet(() -> ColumnType.unsupportedColumns(out).orElseThrow() + " of its output");
      LOG.warn(
          "Overlap: {} runs its CPU implementation on every executor: the GPU does not take {} yet",
          kernel.name(),
          cols);
    }
    if (notTaken != null && writer != null) {
      writer.markGpuNotTaken(notTaken);
    }
    return new JobSetup(
        ds,
        in,
        out,
        sparkConf,
        job,
        writer,
        new PartitionRunner(
            kernel,
            in,
            out,
            writer,
            settings,
            notTaken,
            // The call's own, named for the stage page; shipped with the runner in the closure.
            StageAccumulators.register(ds.sparkSession().sparkContext())));
  }

  /**
   * Why the GPU does not take {@code schema} (the kernel's input or output), when it does not: the
   * job's tasks then run the kernel's CPU implementation, which takes any Spark type. Refused
   * before any work, naming the columns, when the kernel has none or the job forbids the CPU path.
   *
   * @param what "input of " or "output schema of "
   */
  static Optional<String> gpuNotTaken(
      GpuKernel kernel, StructType schema, String what, OverlapConf job) {
    Optional<String> why = ColumnType.unsupported(schema, what + kernel.name());
    if (why.isEmpty()) {
      return why;
    }
    if (kernel.cpu() == null) {
      throw new UnsupportedColumnException(
          why.get()
              + ". Cast or drop the column first, or give the kernel a cpu() implementation.");
    }
    if (job.get(OverlapConf.NO_GPU_MODE) == NoGpuMode.FAIL) {
      throw new UnsupportedColumnException(
          why.get()
              + ". Cast or drop the column first: "
              + OverlapConf.NO_GPU_MODE.key()
              + "=FAIL forbids the kernel's CPU implementation.");
    }
    return why;
  }

  private static JobReport jobReport(PipelineReport report) {
    if (!(report instanceof JobReport r)) {
      throw new IllegalArgumentException(
          "a report must come from PipelineReport.create, not " + report.getClass().getName());
    }
    return r;
  }
}
