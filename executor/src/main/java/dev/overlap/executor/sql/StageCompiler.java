package dev.overlap.executor.sql;

import dev.overlap.executor.input.parquet.delta.DeltaFormat;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.DeclarativeAggregate;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.FilterExec;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.SortExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.aggregate.BaseAggregateExec;
import org.apache.spark.sql.execution.aggregate.HashAggregateExec;
import org.apache.spark.sql.execution.aggregate.SortAggregateExec;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Compiles the part of a physical plan the pipeline takes: a partial aggregate (Spark's hash or
 * sort aggregate) over filters and projections over one Parquet file scan (a Delta table's among
 * them), each expression one {@link Supported} accepts. Anything else is left to Spark, with the
 * reason.
 */
final class StageCompiler {
  private StageCompiler() {}

  /** A partial aggregate compiled, or why it is not: one of the two is null. */
  record Compiled(StagePlan plan, FileSourceScanExec scan, String why) {
    static Compiled no(String why) {
      return new Compiled(null, null, why);
    }
  }

  /** {@code agg} compiled, or why not; null when it is no partial aggregate at all. */
  static Compiled compile(BaseAggregateExec agg) {
    List<AggregateExpression> aes = CollectionConverters.asJava(agg.aggregateExpressions());
    if (aes.isEmpty() && agg.groupingExpressions().isEmpty()) {
      return null;
    }
    if (!aes.stream()
        .allMatch(
            ae ->
                ae.mode()
                    == org.apache.spark.sql.catalyst.expressions.aggregate.Partial$.MODULE$)) {
      return null;
    }
    // The chain under the aggregate, from the top.
    List<SparkPlan> chain = new ArrayList<>();
    SparkPlan p = agg.child();
    // A partial sort aggregate's input is sorted by its keys: the stage's output need not be.
    if (agg instanceof SortAggregateExec && p instanceof SortExec sort) {
      p = sort.child();
    }
    while (p instanceof FilterExec || p instanceof ProjectExec) {
      chain.add(p);
      p = p.children().head();
    }
    if (!(p instanceof FileSourceScanExec scan)) {
      return Compiled.no("its input is " + p.nodeName() + ", not a Parquet file scan");
    }
    String scanWhy = scanWhy(scan);
    if (scanWhy != null) {
      return Compiled.no(scanWhy);
    }
    Collections.reverse(chain);
    List<StagePlan.Step> steps = new ArrayList<>();
    for (SparkPlan s : chain) {
      if (s instanceof FilterExec f) {
        String why = Supported.why(f.condition());
        if (why != null) {
          return Compiled.no("filter " + why);
        }
        steps.add(new StagePlan.Step(f.condition(), null));
      } else {
        List<NamedExpression> list = CollectionConverters.asJava(((ProjectExec) s).projectList());
        String why = named(list);
        if (why != null) {
          return Compiled.no("projection " + why);
        }
        steps.add(new StagePlan.Step(null, list));
      }
    }
    List<NamedExpression> grouping = CollectionConverters.asJava(agg.groupingExpressions());
    String why = named(grouping);
    if (why != null) {
      return Compiled.no("grouping " + why);
    }
    List<AggSpec> specs = new ArrayList<>();
    List<Attribute> expected = new ArrayList<>();
    for (NamedExpression g : grouping) {
      expected.add(g.toAttribute());
    }
    for (AggregateExpression ae : aes) {
      AggSpec.Compiled c = AggSpec.of(ae);
      if (c.spec() == null) {
        return Compiled.no(c.why());
      }
      if (!(ae.aggregateFunction() instanceof DeclarativeAggregate)) {
        return Compiled.no(ae.sql() + ": not a declarative aggregate");
      }
      specs.add(c.spec());
      expected.addAll(
          CollectionConverters.asJava(ae.aggregateFunction().inputAggBufferAttributes()));
    }
    List<Attribute> output = CollectionConverters.asJava(agg.output());
    if (!sameIds(output, expected)) {
      return Compiled.no("its output " + output + " is not its keys and buffers");
    }
    List<Attribute> input = CollectionConverters.asJava(scan.output());
    if (input.isEmpty()) {
      return Compiled.no("the scan reads no column");
    }
    List<Expression> keys = grouping.stream().map(StageCompiler::valueOf).toList();
    String description =
        "partial aggregate of "
            + aes.size()
            + " function(s) by "
            + grouping.size()
            + " key(s), "
            + steps.size()
            + " filter/projection step(s) over "
            + scan.relation().location().rootPaths().size()
            + " path(s)";
    StagePlan plan =
        new StagePlan(
            input, steps, keys, specs, aes, output, description, agg instanceof HashAggregateExec);
    return new Compiled(plan, scan, null);
  }

  private static Expression valueOf(NamedExpression e) {
    return e instanceof Alias a ? a.child() : (Expression) e;
  }

  private static String named(List<NamedExpression> list) {
    for (NamedExpression ne : list) {
      String why = Supported.why(valueOf(ne));
      if (why != null) {
        return why;
      }
    }
    return null;
  }

  private static boolean sameIds(List<Attribute> a, List<Attribute> b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      if (!a.get(i).exprId().equals(b.get(i).exprId())) {
        return false;
      }
    }
    return true;
  }

  /** Why the scan is not one the GPU's Parquet scan reads, or null. */
  private static String scanWhy(FileSourceScanExec scan) {
    if (DeltaFormat.isDelta(scan.relation().fileFormat())) {
      if (!DeltaFormat.plainTable(scan.relation().fileFormat())) {
        String why = DeltaFormat.whyNotPlain(scan.relation().fileFormat());
        return "its Delta table is read by Delta's reader"
            + (why != null ? ": " + why : " (deletion vectors, not taken here yet)");
      }
    } else if (!(scan.relation().fileFormat() instanceof ParquetFileFormat)) {
      return "its scan reads " + scan.relation().fileFormat() + ", not Parquet";
    }
    if (!scan.relation().partitionSchema().isEmpty()) {
      return "its Parquet table has partition columns, not read by the GPU's scan yet";
    }
    if (scan.bucketedScan()) {
      return "its scan is bucketed";
    }
    for (Attribute a : CollectionConverters.asJava(scan.output())) {
      if (!Supported.carried(a.dataType())) {
        return "its scan reads column " + a.name() + " of type " + a.dataType().simpleString();
      }
    }
    return null;
  }
}
