package dev.overlap.executor.sql;

import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.config.SqlExplain;
import dev.overlap.executor.config.SqlKeys;
import dev.overlap.executor.plan.SparkEngine;
import dev.overlap.executor.plugin.ExecutorState;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.SparkConf;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.physical.UnknownPartitioning;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.RDDScanExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.aggregate.BaseAggregateExec;
import org.apache.spark.sql.execution.aggregate.HashAggregateExec;
import org.apache.spark.sql.execution.aggregate.SortAggregateExec;
import org.apache.spark.sql.execution.datasources.LogicalRelation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The physical rule that hands the parts of a plan the SQL compiler takes to Overlap's pipeline: a
 * partial aggregate over filters and projections over a Parquet scan becomes a scan of the rows a
 * compiled kernel ({@link StageKernel}) makes from the same files, named {@code OverlapStage} in
 * the plan; Spark does the rest (the exchange, the final aggregate). Each part left to Spark is
 * logged with its reason as {@code spark.overlap.sql.explain} says.
 */
final class PartialAggregates extends Rule<SparkPlan> {
  private static final Logger LOG = LoggerFactory.getLogger("dev.overlap.sql");

  private final SparkSession session;

  PartialAggregates(SparkSession session) {
    this.session = session;
  }

  @Override
  public SparkPlan apply(SparkPlan plan) {
    OverlapConf conf = OverlapConf.read(k -> session.conf().getOption(k).getOrElse(() -> null));
    if (!conf.get(SqlKeys.ENABLED) || !conf.get(OverlapConf.ENABLED)) {
      return plan;
    }
    String noGpu = conf.get(SqlKeys.WITHOUT_GPU) ? null : noGpu(session);
    return rewrite(plan, conf.get(SqlKeys.EXPLAIN), noGpu);
  }

  private SparkPlan rewrite(SparkPlan p, SqlExplain explain, String noGpu) {
    if (p instanceof HashAggregateExec || p instanceof SortAggregateExec) {
      BaseAggregateExec agg = (BaseAggregateExec) p;
      StageCompiler.Compiled c = StageCompiler.compile(agg);
      if (c != null) {
        String why = c.why() != null ? c.why() : noGpu;
        if (why == null && relationOf(c.scan()).isStreaming()) {
          why = "its scan is a streaming source's";
        }
        if (why == null) {
          if (explain == SqlExplain.ALL) {
            LOG.info("Overlap SQL: on the GPU: {}", c.plan().description());
          }
          return stage(c);
        }
        if (explain != SqlExplain.NONE) {
          LOG.info("Overlap SQL: left to Spark: {}: {}", p.nodeName(), why);
        }
      }
    }
    List<SparkPlan> children = CollectionConverters.asJava(p.children());
    List<SparkPlan> rewritten = new ArrayList<>(children.size());
    boolean changed = false;
    for (SparkPlan child : children) {
      SparkPlan r = rewrite(child, explain, noGpu);
      changed |= r != child;
      rewritten.add(r);
    }
    return changed ? p.withNewChildren(CollectionConverters.asScala(rewritten).toSeq()) : p;
  }

  /** The compiled part as a scan of the kernel's rows over the same files. */
  private SparkPlan stage(StageCompiler.Compiled c) {
    FileSourceScanExec scan = c.scan();
    LogicalPlan relation = relationOf(scan);
    List<NamedExpression> cols = new ArrayList<>(CollectionConverters.asJava(scan.output()));
    Dataset<Row> input =
        org.apache.spark.sql.classic.Dataset.ofRows(
            session, new Project(CollectionConverters.asScala(cols).toSeq(), relation));
    RDD<InternalRow> rows = SparkEngine.rows(input, new StageKernel(c.plan()), null);
    return new RDDScanExec(
        CollectionConverters.asScala(c.plan().output()).toSeq(),
        rows,
        "OverlapStage[" + c.plan().description() + "]",
        new UnknownPartitioning(0),
        CollectionConverters.asScala(List.<SortOrder>of()).toSeq(),
        scala.Option.empty());
  }

  /** The logical relation a file scan was planned from. */
  private static LogicalRelation relationOf(FileSourceScanExec scan) {
    LogicalPlan link =
        scan.logicalLink()
            .getOrElse(
                () -> {
                  throw new IllegalStateException("a scan with no logical plan: " + scan);
                });
    for (LogicalPlan leaf : CollectionConverters.asJava(link.collectLeaves())) {
      if (leaf instanceof LogicalRelation r && r.relation() == scan.relation()) {
        return r;
      }
    }
    throw new IllegalStateException("no relation under " + link);
  }

  /** Why no GPU is known to run the stage, or null when one is. */
  static String noGpu(SparkSession session) {
    SparkConf conf = session.sparkContext().getConf();
    if (session.sparkContext().isLocal()) {
      return ExecutorState.status().gpu() ? null : "no usable GPU in this process";
    }
    double gpus = conf.getDouble("spark.executor.resource.gpu.amount", 0);
    return gpus > 0 ? null : "the executors ask for no GPU (spark.executor.resource.gpu.amount)";
  }
}
