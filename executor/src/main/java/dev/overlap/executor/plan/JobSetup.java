package dev.overlap.executor.plan;

import dev.overlap.executor.api.GpuKernel;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.config.UnknownKeys;
import dev.overlap.executor.task.JobReport;
import dev.overlap.executor.task.PartitionRunner;
import dev.overlap.executor.types.ColumnType;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.StructType;

/**
 * What every job a kernel is applied to checks and settles on the driver before its input is
 * planned, whatever its output: both schemas, the session's keys, the plugin, the job's settings
 * and the runner its tasks carry.
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

  static JobSetup of(Dataset<Row> input, GpuKernel kernel, PipelineReport report) {
    JobReport writer = report == null ? null : jobReport(report);
    StructType in = input.schema();
    ColumnType.forSchema(in, "input of " + kernel.name());
    StructType out = kernel.outputSchema(in);
    ColumnType.forSchema(out, "output schema of " + kernel.name());
    org.apache.spark.sql.classic.Dataset<Row> ds =
        (org.apache.spark.sql.classic.Dataset<Row>) input;
    // A key the job set on the session with a typo fails here as it would at start.
    UnknownKeys.check(
        scala.jdk.javaapi.CollectionConverters.asJava(ds.sparkSession().conf().getAll().keySet()));
    // Keys that are not startup-only are taken from the session, so a job can set them.
    Function<String, String> sparkConf =
        k -> ds.sparkSession().conf().getOption(k).getOrElse(() -> null);
    PluginCheck.check(sparkConf, kernel.name(), writer);
    Map<String, String> settings = OverlapConf.jobSettings(sparkConf);
    return new JobSetup(
        ds,
        in,
        out,
        sparkConf,
        OverlapConf.fromMap(settings),
        writer,
        new PartitionRunner(kernel, in, out, writer, settings));
  }

  private static JobReport jobReport(PipelineReport report) {
    if (!(report instanceof JobReport r)) {
      throw new IllegalArgumentException(
          "a report must come from PipelineReport.create, not " + report.getClass().getName());
    }
    return r;
  }
}
