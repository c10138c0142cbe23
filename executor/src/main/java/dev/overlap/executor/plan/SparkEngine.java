package dev.overlap.executor.plan;

import dev.overlap.executor.api.Engine;
import dev.overlap.executor.api.GpuKernel;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.api.PipelineTotals;
import dev.overlap.executor.api.Written;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.input.parquet.ParquetInput;
import dev.overlap.executor.output.parquet.ParquetWrite;
import dev.overlap.executor.output.parquet.TaskFiles;
import dev.overlap.executor.output.parquet.Wrote;
import dev.overlap.executor.pipeline.PipelineMetrics;
import dev.overlap.executor.plugin.ExecutorState;
import dev.overlap.executor.task.JobReport;
import dev.overlap.executor.task.PartitionRunner;
import dev.overlap.executor.task.TaskInput;
import dev.overlap.executor.trace.Diagnostics;
import dev.overlap.executor.types.ColumnType;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.slf4j.Logger;

/** The implementation behind the public API, found by {@link Engine#get()}. */
public final class SparkEngine implements Engine {
  /** Planning times: to the run's log only (conf/log4j2.properties), not to the terminal. */
  private static final Logger TIMES = Diagnostics.logger(SparkEngine.class);

  @Override
  public Dataset<Row> map(Dataset<Row> input, GpuKernel kernel, PipelineReport report) {
    JobReport writer = report == null ? null : jobReport(report);
    long start = System.nanoTime();
    StructType in = input.schema();
    ColumnType.forSchema(in, "input of " + kernel.name());
    StructType out = kernel.outputSchema(in);
    ColumnType.forSchema(out, "output schema of " + kernel.name());

    org.apache.spark.sql.classic.Dataset<Row> ds =
        (org.apache.spark.sql.classic.Dataset<Row>) input;
    // A key the job set on the session with a typo fails here as it would at start.
    OverlapConf.checkKnownKeys(
        scala.jdk.javaapi.CollectionConverters.asJava(ds.sparkSession().conf().getAll().keySet()));
    // Keys that are not startup-only are taken from the session, so a job can set them.
    Function<String, String> sparkConf = sparkConf(ds);
    PluginCheck.check(sparkConf, kernel.name(), writer);
    Map<String, String> settings = OverlapConf.jobSettings(sparkConf);
    PartitionRunner runner = new PartitionRunner(kernel, in, out, writer, settings);
    OverlapConf job = OverlapConf.fromMap(settings);
    OverlapConf.RapidsInput mode = job.get(OverlapConf.RAPIDS_INPUT);
    boolean enabled = job.get(OverlapConf.ENABLED);
    boolean onClassPath = RapidsInput.present(SparkEngine.class.getClassLoader());
    long settled = System.nanoTime();
    // Beside RAPIDS, a plain Parquet scan is planned without it first: Overlap decodes it itself.
    ColumnarPlans.Columnar columnar =
        RapidsInput.ownScanFirst(sparkConf, mode, enabled, job.get(OverlapConf.PARQUET_DECODE))
            ? ownParquetScan(ds)
            : null;
    Optional<String> rapids;
    boolean takeRapids;
    if (columnar != null) {
      Optional<String> before =
          RapidsInput.beforePlanning(sparkConf, mode, enabled, in, onClassPath);
      rapids = Optional.of(before.orElse(RapidsInput.OWN_SCAN));
      takeRapids = false;
    } else {
      SparkPlan plan = ds.queryExecution().executedPlan();
      rapids = RapidsInput.whyNot(sparkConf, mode, enabled, plan, onClassPath);
      takeRapids = rapids != null && rapids.isEmpty();
      columnar = ColumnarPlans.columnar(plan);
    }
    if (writer != null && rapids != null) {
      writer.rapidsNotTaken(rapids.orElse(null));
    }
    long planned = System.nanoTime();
    RDD<InternalRow> result;
    if (takeRapids) {
      result =
          RapidsInput.tables(input)
              .toJavaRDD()
              .mapPartitions(it -> runner.map(new TaskInput.Rapids(it)))
              .rdd();
    } else if (columnar != null) {
      RDD<ColumnarBatch> batches = columnar.plan().executeColumnar();
      int[] columns = columnar.columns();
      FileSourceScanExec scan = columnar.parquetScan();
      ParquetInput parquet =
          scan == null ? null : ParquetInput.of(scan, columnar.names(), in, ds.sparkSession());
      if (parquet != null) {
        result =
            batches
                .toJavaRDD()
                .mapPartitionsWithIndex(
                    (i, it) ->
                        runner.map(
                            new TaskInput.Parquet(parquet, i, ColumnarPlans.select(columns, it))),
                    true)
                .rdd();
      } else {
        result =
            batches
                .toJavaRDD()
                .mapPartitions(
                    it -> runner.map(new TaskInput.Columnar(ColumnarPlans.select(columns, it))))
                .rdd();
      }
    } else {
      result =
          ds.queryExecution()
              .toRdd()
              .toJavaRDD()
              .mapPartitions(it -> runner.map(new TaskInput.Rows(it)))
              .rdd();
    }
    long end = System.nanoTime();
    TIMES.info(
        "{} planned in {} ms: schemas and settings {} ms, input's plan {} ms, its partitions {}"
            + " ms",
        kernel.name(),
        (end - start) / 1_000_000,
        (settled - start) / 1_000_000,
        (planned - settled) / 1_000_000,
        (end - planned) / 1_000_000);
    return ds.sparkSession().internalCreateDataFrame(result, out, false);
  }

  @Override
  public Written write(
      Dataset<Row> input, GpuKernel kernel, ParquetOutput output, PipelineReport report) {
    JobReport writer = report == null ? null : jobReport(report);
    StructType in = input.schema();
    ColumnType.forSchema(in, "input of " + kernel.name());
    StructType out = kernel.outputSchema(in);
    ColumnType.forSchema(out, "output schema of " + kernel.name());
    org.apache.spark.sql.classic.Dataset<Row> ds =
        (org.apache.spark.sql.classic.Dataset<Row>) input;
    OverlapConf.checkKnownKeys(
        scala.jdk.javaapi.CollectionConverters.asJava(ds.sparkSession().conf().getAll().keySet()));
    Function<String, String> sparkConf = sparkConf(ds);
    PluginCheck.check(sparkConf, kernel.name(), writer);
    Map<String, String> settings = OverlapConf.jobSettings(sparkConf);
    PartitionRunner runner = new PartitionRunner(kernel, in, out, writer, settings);
    ParquetWrite write = ParquetWrite.begin(ds.sparkSession(), output, out);
    try {
      OverlapConf job = OverlapConf.fromMap(settings);
      ColumnarPlans.Columnar columnar =
          RapidsInput.ownScanFirst(
                  sparkConf,
                  null,
                  job.get(OverlapConf.ENABLED),
                  job.get(OverlapConf.PARQUET_DECODE))
              ? ownParquetScan(ds)
              : null;
      if (writer != null && RapidsInput.inPlugins(sparkConf)) {
        writer.rapidsNotTaken(
            columnar != null ? RapidsInput.WRITE_OWN_SCAN : RapidsInput.WRITE_NOT_TAKEN);
      }
      if (columnar == null) {
        columnar = ColumnarPlans.columnar(ds.queryExecution().executedPlan());
      }
      JavaRDD<TaskFiles.Outcome> tasks;
      if (columnar != null) {
        RDD<ColumnarBatch> batches = columnar.plan().executeColumnar();
        int[] columns = columnar.columns();
        FileSourceScanExec scan = columnar.parquetScan();
        ParquetInput parquet =
            scan == null ? null : ParquetInput.of(scan, columnar.names(), in, ds.sparkSession());
        tasks =
            batches
                .toJavaRDD()
                .mapPartitionsWithIndex(
                    (i, it) ->
                        writeTask(
                            write,
                            files ->
                                runner.write(
                                    parquet != null
                                        ? new TaskInput.Parquet(
                                            parquet, i, ColumnarPlans.select(columns, it))
                                        : new TaskInput.Columnar(ColumnarPlans.select(columns, it)),
                                    write,
                                    files)),
                    false);
      } else {
        tasks =
            ds.queryExecution()
                .toRdd()
                .toJavaRDD()
                .mapPartitions(
                    it ->
                        writeTask(
                            write, files -> runner.write(new TaskInput.Rows(it), write, files)));
      }
      if (tasks.getNumPartitions() == 0) {
        // An input of no partitions still gets its one task, which writes the schema's file.
        tasks =
            JavaSparkContext.fromSparkContext(ds.sparkSession().sparkContext())
                .parallelize(List.of(0), 1)
                .mapPartitions(it -> writeTask(write, files -> new Wrote(0, false)));
      }
      return write.commit(tasks.collect());
    } catch (Throwable e) { // SparkException from collect is checked
      write.abort(e);
      throw e;
    }
  }

  private static Function<String, String> sparkConf(org.apache.spark.sql.classic.Dataset<Row> ds) {
    return k -> ds.sparkSession().conf().getOption(k).getOrElse(() -> null);
  }

  /**
   * The input's columnar plan when it is a plain Parquet scan, as Spark alone plans it; null when
   * it is not one (then it is not planned at all unless its logical plan looked like one). Taken
   * from Spark's physical plan before its preparations, where RAPIDS' columnar rules have not yet
   * replaced the scan: planned once, in the job's session. Should no columnar file scan be found
   * there (an extension's strategy planned it, or a bucketed scan), it is planned again without
   * RAPIDS ({@link RapidsInput#planWithoutRapids}).
   */
  private static ColumnarPlans.Columnar ownParquetScan(
      org.apache.spark.sql.classic.Dataset<Row> ds) {
    if (!RapidsInput.plainParquet(ds.queryExecution().optimizedPlan())) {
      return null;
    }
    long start = System.nanoTime();
    ColumnarPlans.Columnar own =
        ColumnarPlans.scanBeforePreparations(ds.queryExecution().sparkPlan());
    // Found but not a Parquet scan Overlap reads (a partition column, say): planning it again
    // would find the same scan.
    boolean again = own == null;
    if (again) {
      own = ColumnarPlans.columnar(RapidsInput.planWithoutRapids(ds));
    }
    TIMES.info(
        "a plain Parquet scan planned without RAPIDS' rules in {} ms ({})",
        (System.nanoTime() - start) / 1_000_000,
        again ? "again, in a clone of the session" : "Spark's plan before its preparations");
    return own != null && own.parquetScan() != null ? own : null;
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

  private static JobReport jobReport(PipelineReport report) {
    if (!(report instanceof JobReport r)) {
      throw new IllegalArgumentException(
          "a report must come from PipelineReport.create, not " + report.getClass().getName());
    }
    return r;
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
