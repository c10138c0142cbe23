package dev.overlap.executor.plan;

import dev.overlap.executor.api.Engine;
import dev.overlap.executor.api.GpuKernel;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.api.PipelineTotals;
import dev.overlap.executor.api.Written;
import dev.overlap.executor.output.parquet.ParquetWrite;
import dev.overlap.executor.output.parquet.TaskFiles;
import dev.overlap.executor.output.parquet.Wrote;
import dev.overlap.executor.pipeline.PipelineMetrics;
import dev.overlap.executor.plugin.ExecutorState;
import dev.overlap.executor.task.JobReport;
import dev.overlap.executor.task.PartitionRunner;
import dev.overlap.executor.trace.Diagnostics;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.slf4j.Logger;

/** The implementation behind the public API, found by {@link Engine#get()}. */
public final class SparkEngine implements Engine {
  /** Planning times: to the run's log only (conf/log4j2.properties), not to the terminal. */
  private static final Logger TIMES = Diagnostics.logger(SparkEngine.class);

  @Override
  public Dataset<Row> map(Dataset<Row> input, GpuKernel kernel, PipelineReport report) {
    Mapped m = mapRows(input, kernel, report);
    return m.setup().ds().sparkSession().internalCreateDataFrame(m.rows(), m.setup().out(), false);
  }

  /** A kernel mapped over an input: its rows, planned not run, and the call's setup. */
  record Mapped(RDD<InternalRow> rows, JobSetup setup) {}

  /**
   * As {@link #map}, the result as Spark's internal rows, for a physical plan that runs the
   * kernel's stage (the SQL compiler's).
   */
  public static RDD<InternalRow> rows(Dataset<Row> input, GpuKernel kernel, PipelineReport report) {
    return mapRows(input, kernel, report).rows();
  }

  private static Mapped mapRows(Dataset<Row> input, GpuKernel kernel, PipelineReport report) {
    long start = System.nanoTime();
    JobSetup s = JobSetup.of(input, kernel, report);
    long settled = System.nanoTime();
    PlannedInput planned = InputPlanner.forMap(s);
    long plannedAt = System.nanoTime();
    PartitionRunner runner = s.runner();
    RDD<InternalRow> result = planned.tasks(runner::map).rdd();
    long end = System.nanoTime();
    TIMES.info(
        "{} planned in {} ms: schemas and settings {} ms, input's plan {} ms, its partitions {}"
            + " ms",
        kernel.name(),
        (end - start) / 1_000_000,
        (settled - start) / 1_000_000,
        (plannedAt - settled) / 1_000_000,
        (end - plannedAt) / 1_000_000);
    return new Mapped(result, s);
  }

  @Override
  public Written write(
      Dataset<Row> input, GpuKernel kernel, ParquetOutput output, PipelineReport report) {
    JobSetup s = JobSetup.of(input, kernel, report);
    PartitionRunner runner = s.runner();
    ParquetWrite write = ParquetWrite.begin(s.ds().sparkSession(), output, s.out());
    try {
      JavaRDD<TaskFiles.Outcome> tasks =
          InputPlanner.forWrite(s)
              .tasks(in -> writeTask(write, files -> runner.write(in, write, files)));
      if (tasks.getNumPartitions() == 0) {
        // An input of no partitions still gets its one task, which writes the schema's file.
        tasks =
            JavaSparkContext.fromSparkContext(s.ds().sparkSession().sparkContext())
                .parallelize(List.of(0), 1)
                .mapPartitions(it -> writeTask(write, files -> new Wrote(0, false)));
      }
      return write.commit(tasks.collect());
    } catch (Throwable e) { // SparkException from collect is checked
      write.abort(e);
      throw e;
    }
  }

  /** One task of a write: its attempt's files committed, or aborted when it fails. */
  private static Iterator<TaskFiles.Outcome> writeTask(ParquetWrite write, TaskBody body)
      throws Exception {
    TaskFiles files = write.openTask();
    try {
      Wrote w = body.run(files);
      // As Spark's own writer: the first task writes a file even with no rows, so that an output
      // of no rows has its schema.
      if (files.files() == 0 && TaskContext.getPartitionId() == 0) {
        write.schemaOnlyFile(files);
      }
      return List.of(files.commit(w.rows(), w.gpu())).iterator();
    } catch (Exception | Error e) {
      files.abort(e);
      throw e;
    }
  }

  /** What a write task runs. */
  private interface TaskBody {
    Wrote run(TaskFiles files) throws Exception;
  }

  @Override
  public GpuStatus status() {
    return ExecutorState.status();
  }

  @Override
  public PipelineReport newReport(SparkSession spark) {
    return new JobReport(spark);
  }

  @Override
  public Optional<PipelineTotals> pipelineTotals() {
    return ExecutorState.runtime().map(r -> totals(r.pipeline().metrics().snapshot()));
  }

  static PipelineTotals totals(PipelineMetrics.Snapshot s) {
    Map<PipelineStage, Long> busy = new EnumMap<>(PipelineStage.class);
    for (PipelineStage stage : PipelineStage.values()) {
      busy.put(stage, s.busy(stage));
    }
    return new PipelineTotals(busy, s.batches(), s.bytes(), s.overlapNanos());
  }
}
