package dev.overlap.executor.plan;

import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.config.ParquetDecodeMode;
import dev.overlap.executor.config.RapidsInputMode;
import dev.overlap.executor.input.rapids.RapidsBatches;
import java.util.Arrays;
import java.util.Optional;
import java.util.function.Function;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.datasources.FileFormat;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.LogicalRelation;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;

/**
 * The RAPIDS Accelerator's device batches as a kernel's input, found at run time: this project
 * compiles and runs without the RAPIDS jar. {@link #whyNot} decides on the driver whether a plan's
 * batches can be taken; {@code RapidsBatches.tables} turns the Dataset into an RDD of cuDF tables
 * on the GPU through RAPIDS' {@code com.nvidia.spark.rapids.ColumnarRdd}. On the executor, {@code
 * RapidsBatches} takes RAPIDS' GPU admission for each task that reads those tables.
 */
public final class RapidsInput {
  static final String SQL_PLUGIN = "com.nvidia.spark.SQLPlugin";
  static final String COLUMNAR_RDD = RapidsBatches.COLUMNAR_RDD;

  /** The widest decimal ColumnarRdd exports: cuDF's 64-bit decimals. */
  static final int MAX_EXPORTED_DECIMAL_DIGITS = 18;

  private RapidsInput() {}

  /**
   * Why the kernel's input does not come from RAPIDS' device batches, in a few words; empty when it
   * does. Null when the RAPIDS Accelerator is not in {@code spark.plugins} at all (nothing to say).
   *
   * @param conf a Spark setting's value, or null when unset
   */
  static Optional<String> whyNot(
      Function<String, String> conf,
      RapidsInputMode mode,
      boolean overlapEnabled,
      SparkPlan plan,
      boolean onClassPath) {
    Optional<String> before =
        beforePlanning(conf, mode, overlapEnabled, plan.schema(), onClassPath);
    if (before == null || before.isPresent()) {
      return before;
    }
    if (plan instanceof AdaptiveSparkPlanExec) {
      // Under adaptive execution the plan cannot be judged before it runs, and ColumnarRdd may
      // not find RAPIDS' batches: then it converts rows on the host, as packing does, and that
      // conversion fails on dates in RAPIDS 26.08.1 (seen on a GPU: a shuffle over local rows).
      return Optional.of(ADAPTIVE);
    }
    if (!onGpu(plan)) {
      return Optional.of(
          "RAPIDS did not place the plan on the GPU (its last operator is "
              + plan.nodeName()
              + ")");
    }
    return Optional.empty();
  }

  /**
   * The reasons of {@link #whyNot} that need no physical plan: the settings, the class path, the
   * columns' types. Null when RAPIDS is not in {@code spark.plugins}; empty when none applies.
   */
  static Optional<String> beforePlanning(
      Function<String, String> conf,
      RapidsInputMode mode,
      boolean overlapEnabled,
      StructType schema,
      boolean onClassPath) {
    if (!inPlugins(conf)) {
      return null;
    }
    if (mode == RapidsInputMode.OFF) {
      return Optional.of(OverlapConf.RAPIDS_INPUT.key() + "=OFF");
    }
    if (!overlapEnabled) {
      return Optional.of(OverlapConf.ENABLED.key() + "=false");
    }
    if (!onClassPath) {
      return Optional.of(COLUMNAR_RDD + " is not on the class path (ship the RAPIDS jar)");
    }
    Optional<String> off = rapidsOff(conf);
    if (off.isPresent()) {
      return off;
    }
    return notExported(schema);
  }

  /**
   * Whether a plain Parquet scan under a kernel is planned without RAPIDS and decoded by Overlap
   * before RAPIDS' plan is even made: RAPIDS is in {@code spark.plugins} and plans the session's
   * queries, Overlap runs the kernel on the GPU and decodes Parquet there, and the setting does not
   * ask for RAPIDS' batches of plain scans ({@code ALWAYS}).
   *
   * @param mode null for a write, which never takes RAPIDS' batches
   */
  static boolean ownScanFirst(
      Function<String, String> conf,
      RapidsInputMode mode,
      boolean overlapEnabled,
      ParquetDecodeMode decode) {
    return inPlugins(conf)
        && rapidsOff(conf).isEmpty()
        && overlapEnabled
        && decode != ParquetDecodeMode.HOST
        && mode != RapidsInputMode.ALWAYS;
  }

  /**
   * Whether the optimized logical plan reads Parquet files whose format the GPU's scan decodes as
   * is (Spark's own; Delta's for a table whose files are plain Parquet: {@link
   * ColumnarPlans#decodesAsIs}) and at most selects or computes columns of them (projections and
   * aliases over one such relation): a candidate for Overlap's own scan. Whether it is one is
   * decided on the physical plan ({@link ColumnarPlans#columnar}).
   */
  static boolean plainParquet(LogicalPlan plan) {
    FileFormat f = filesRead(plan);
    return f != null && ColumnarPlans.decodesAsIs(f);
  }

  /**
   * The format of the files an optimized logical plan reads, when it is one file relation under at
   * most projections and aliases; else null.
   */
  static FileFormat filesRead(LogicalPlan plan) {
    LogicalPlan p = plan;
    while (p instanceof Project || p instanceof SubqueryAlias) {
      p = p.children().head();
    }
    return p instanceof LogicalRelation r && r.relation() instanceof HadoopFsRelation fs
        ? fs.fileFormat()
        : null;
  }

  /**
   * The first column of a type RAPIDS' ColumnarRdd refuses to export (it takes decimals of up to 18
   * digits and timestamps with a time zone, not {@code timestamp_ntz}), as a reason; empty when
   * every column can come as a device batch.
   */
  static Optional<String> notExported(StructType schema) {
    for (StructField f : schema.fields()) {
      DataType t = refusedPart(f.dataType());
      if (t != null) {
        return Optional.of(
            "column '"
                + f.name()
                + "' is "
                + (t == f.dataType()
                    ? t.simpleString()
                    : f.dataType().simpleString() + ", holding " + t.simpleString())
                + ", which RAPIDS' ColumnarRdd does not export (decimals of up to "
                + MAX_EXPORTED_DECIMAL_DIGITS
                + " digits, timestamps with a time zone)");
      }
    }
    return Optional.empty();
  }

  /** The part of {@code t}, nested parts included, that ColumnarRdd refuses; null if none. */
  private static DataType refusedPart(DataType t) {
    if (t instanceof TimestampNTZType
        || (t instanceof DecimalType d && d.precision() > MAX_EXPORTED_DECIMAL_DIGITS)) {
      return t;
    }
    for (DataType c : dev.overlap.executor.types.NestedTypes.children(t)) {
      DataType bad = refusedPart(c);
      if (bad != null) {
        return bad;
      }
    }
    return null;
  }

  /** Whether the RAPIDS Accelerator is listed in {@code spark.plugins}. */
  static boolean inPlugins(Function<String, String> conf) {
    String plugins = conf.apply("spark.plugins");
    return plugins != null
        && Arrays.stream(plugins.split(",")).map(String::trim).anyMatch(SQL_PLUGIN::equals);
  }

  /** The setting that keeps RAPIDS from planning this session's queries; empty when none does. */
  static Optional<String> rapidsOff(Function<String, String> conf) {
    if ("false".equalsIgnoreCase(String.valueOf(conf.apply("spark.rapids.sql.enabled")).trim())) {
      return Optional.of("spark.rapids.sql.enabled=false");
    }
    String mode = conf.apply("spark.rapids.sql.mode");
    if (mode != null && mode.trim().equalsIgnoreCase("explainonly")) {
      return Optional.of("spark.rapids.sql.mode=explainOnly");
    }
    return Optional.empty();
  }

  /** Why a plan under adaptive execution does not give its device batches. */
  static final String ADAPTIVE =
      "the plan runs under adaptive execution (an exchange below the kernel: a join, an"
          + " aggregation, a repartition), where RAPIDS' ColumnarRdd converts rows on the host"
          + " instead of handing over its batches";

  /** Why AUTO left a plain Parquet scan's batches to Overlap. */
  static final String OWN_SCAN =
      "a plain Parquet scan, which Overlap decodes on the GPU itself ("
          + OverlapConf.RAPIDS_INPUT.key()
          + "=ALWAYS takes RAPIDS' batches)";

  /** Why a write's input is Overlap's own plain Parquet scan, not RAPIDS' plan of it. */
  static final String WRITE_OWN_SCAN =
      "a plain Parquet scan, which Overlap decodes on the GPU itself (GpuPartitions.write does not"
          + " take RAPIDS' batches)";

  /** Why a write's input is not RAPIDS' device batches. */
  static final String WRITE_NOT_TAKEN = "GpuPartitions.write does not take RAPIDS' batches";

  /**
   * {@code ds} planned by Spark alone: RAPIDS replaces Spark's Parquet scan with its own, which
   * Overlap cannot read from. Planned in a clone of the session with RAPIDS off, so that the
   * session itself, and queries other threads plan in it meanwhile, are untouched; running the plan
   * later does not consult the setting again.
   */
  static SparkPlan planWithoutRapids(org.apache.spark.sql.classic.Dataset<Row> ds) {
    org.apache.spark.sql.classic.SparkSession clone = ds.sparkSession().cloneSession();
    clone.conf().set("spark.rapids.sql.enabled", "false");
    return org.apache.spark.sql.classic.Dataset.ofRows(clone, ds.logicalPlan())
        .queryExecution()
        .executedPlan();
  }

  static boolean present(ClassLoader loader) {
    try {
      Class.forName(COLUMNAR_RDD, false, loader);
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /**
   * Whether RAPIDS runs the plan's last operator on the GPU: the top is RAPIDS' transition to rows
   * over a GPU operator, or a GPU operator itself (RAPIDS names its operators Gpu...).
   */
  static boolean onGpu(SparkPlan top) {
    if (isGpu(top) && !top.nodeName().equals("GpuColumnarToRow")) {
      return true;
    }
    if (top.children().isEmpty()) {
      return false;
    }
    SparkPlan child = top.children().head();
    return (top.getClass().getSimpleName().startsWith("GpuColumnarToRow")) && isGpu(child);
  }

  private static boolean isGpu(SparkPlan p) {
    return p.getClass().getSimpleName().startsWith("Gpu");
  }
}
