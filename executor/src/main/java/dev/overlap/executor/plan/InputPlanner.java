package dev.overlap.executor.plan;

import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.config.RapidsInputMode;
import dev.overlap.executor.input.parquet.ParquetInput;
import dev.overlap.executor.input.rapids.RapidsBatches;
import dev.overlap.executor.trace.Diagnostics;
import java.util.Optional;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides a job's input path on the driver, once ({@link PlannedInput}): the RAPIDS Accelerator's
 * device batches when they can be taken (never for a write), else a plain Parquet scan the GPU
 * decodes itself (a Delta table's files too when they are plain Parquet, its deletion vectors
 * applied on the device), else the columnar batches of the input's plan, else Spark's rows. Why
 * RAPIDS' batches were not taken, and why a Delta table's files were not decoded by the GPU, go
 * into the job's report.
 */
final class InputPlanner {
  private static final Logger TIMES = Diagnostics.logger(InputPlanner.class);
  private static final Logger LOG = LoggerFactory.getLogger(InputPlanner.class);

  private InputPlanner() {}

  /** The input path of a job whose output is rows. */
  static PlannedInput forMap(JobSetup s) {
    if (s.runner().cpuOnly()) {
      return rows(s);
    }
    RapidsInputMode mode = s.job().get(OverlapConf.RAPIDS_INPUT);
    boolean enabled = s.job().get(OverlapConf.ENABLED);
    boolean onClassPath = RapidsInput.present(InputPlanner.class.getClassLoader());
    // Beside RAPIDS, a plain Parquet scan is planned without it first: Overlap decodes it itself.
    ColumnarPlans.Columnar columnar =
        RapidsInput.ownScanFirst(
                s.sparkConf(), mode, enabled, s.job().get(OverlapConf.PARQUET_DECODE))
            ? ownParquetScan(s.ds())
            : null;
    Optional<String> rapids;
    if (columnar != null) {
      Optional<String> before =
          RapidsInput.beforePlanning(s.sparkConf(), mode, enabled, s.in(), onClassPath);
      rapids = Optional.of(before.orElse(RapidsInput.OWN_SCAN));
    } else {
      SparkPlan plan = s.ds().queryExecution().executedPlan();
      rapids = RapidsInput.whyNot(s.sparkConf(), mode, enabled, plan, onClassPath);
      if (rapids == null || rapids.isPresent()) {
        columnar = columnarOrDeltaScan(s, plan);
      }
    }
    if (s.report() != null && rapids != null) {
      s.report().rapidsNotTaken(rapids.orElse(null));
    }
    if (rapids != null && rapids.isEmpty()) {
      return new PlannedInput.Rapids(RapidsBatches.tables(s.ds()));
    }
    return withDeltaReasons(s, columnarOrRows(s, columnar));
  }

  /** The input path of a job whose output is Parquet files: never RAPIDS' batches. */
  static PlannedInput forWrite(JobSetup s) {
    if (s.runner().cpuOnly()) {
      return rows(s);
    }
    ColumnarPlans.Columnar columnar =
        RapidsInput.ownScanFirst(
                s.sparkConf(),
                null,
                s.job().get(OverlapConf.ENABLED),
                s.job().get(OverlapConf.PARQUET_DECODE))
            ? ownParquetScan(s.ds())
            : null;
    if (s.report() != null && RapidsInput.inPlugins(s.sparkConf())) {
      s.report()
          .rapidsNotTaken(
              columnar != null ? RapidsInput.WRITE_OWN_SCAN : RapidsInput.WRITE_NOT_TAKEN);
    }
    if (columnar == null) {
      columnar = columnarOrDeltaScan(s, s.ds().queryExecution().executedPlan());
    }
    return withDeltaReasons(s, columnarOrRows(s, columnar));
  }

  /**
   * {@code planned}; when it is not the GPU's Parquet scan, why each Delta table the input reads is
   * not decoded by it ({@link DeltaScans#whyNotDecoded}) goes into the log and the job's report.
   */
  private static PlannedInput withDeltaReasons(JobSetup s, PlannedInput planned) {
    if (planned instanceof PlannedInput.Parquet) {
      return planned;
    }
    for (String why : DeltaScans.whyNotDecoded(s.ds().queryExecution().optimizedPlan())) {
      LOG.info("Parquet decoded on the host: {}", why);
      if (s.report() != null) {
        s.report().addFallback(why);
      }
    }
    return planned;
  }

  /** Spark's rows, for a kernel's CPU implementation on every executor. */
  private static PlannedInput rows(JobSetup s) {
    return new PlannedInput.Rows(s.ds().queryExecution().toRdd());
  }

  private static PlannedInput columnarOrRows(JobSetup s, ColumnarPlans.Columnar columnar) {
    if (columnar == null) {
      return rows(s);
    }
    FileSourceScanExec scan = columnar.parquetScan();
    ParquetInput parquet =
        scan == null
            ? null
            : ParquetInput.of(scan, columnar.names(), s.in(), s.ds().sparkSession());
    if (parquet == null && columnar.deletedColumn() >= 0) {
      // Delta's scan still holds the rows its vectors list: only Spark's filter drops them.
      return rows(s);
    }
    return parquet == null
        ? new PlannedInput.Columnar(columnar.plan().executeColumnar(), columnar.columns())
        : new PlannedInput.Parquet(
            columnar.plan().executeColumnar(),
            columnar.columns(),
            columnar.deletedColumn(),
            parquet);
  }

  /**
   * The columnar plan under {@code executed}, the input's prepared plan; else, for a Delta table
   * with deletion vectors (Spark's filter of the rows they list over Delta's scan, which is no
   * columnar plan), Delta's scan as {@link #deltaScan} finds it; else null.
   */
  private static ColumnarPlans.Columnar columnarOrDeltaScan(JobSetup s, SparkPlan executed) {
    ColumnarPlans.Columnar c = ColumnarPlans.columnar(executed);
    return c != null ? c : deltaScan(s.ds());
  }

  /**
   * The scan of a Delta table with deletion vectors whose files the GPU's Parquet scan decodes, in
   * Spark's plan before its preparations ({@link DeletionVectorScans}); null when the input is no
   * such scan.
   */
  private static ColumnarPlans.Columnar deltaScan(org.apache.spark.sql.classic.Dataset<Row> ds) {
    if (!DeletionVectorScans.inLogicalPlan(ds.queryExecution().optimizedPlan())) {
      return null;
    }
    ColumnarPlans.Columnar dv =
        DeletionVectorScans.beforePreparations(ds.queryExecution().sparkPlan());
    return dv != null && dv.parquetScan() != null ? dv : null;
  }

  /**
   * The input's columnar plan when it is a plain Parquet scan (a plain Delta table's among them),
   * as Spark alone plans it, or a Delta table's scan whose deletion vectors the GPU's scan applies
   * ({@link #deltaScan}); null when it is neither (then it is not planned at all unless its logical
   * plan looked like one). Taken from Spark's physical plan before its preparations, where RAPIDS'
   * columnar rules have not yet replaced the scan: planned once, in the job's session. Should no
   * columnar file scan be found there (an extension's strategy planned it, or a bucketed scan), it
   * is planned again without RAPIDS ({@link RapidsInput#planWithoutRapids}).
   */
  static ColumnarPlans.Columnar ownParquetScan(org.apache.spark.sql.classic.Dataset<Row> ds) {
    ColumnarPlans.Columnar dv = deltaScan(ds);
    if (dv != null || !RapidsInput.plainParquet(ds.queryExecution().optimizedPlan())) {
      return dv;
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
}
