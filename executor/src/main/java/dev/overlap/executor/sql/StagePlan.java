package dev.overlap.executor.sql;

import java.io.Serializable;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.types.StructType;

/**
 * What one compiled stage computes over the columns a file scan reads: its filters and projections
 * from the scan up, then a partial aggregate. Spark's own expressions, bound by attribute: the GPU
 * evaluates them ({@link StageKernel}), the CPU through Spark ({@link CpuStage}).
 *
 * @param input the scan's columns, in the order the kernel receives them
 * @param steps the filters and projections from the scan up
 * @param keys the grouping expressions (an alias's child for an alias)
 * @param aggs the partial aggregates, in the aggregate's order
 * @param functions Spark's own aggregate expressions, for the CPU
 * @param output the aggregate's output: keys, then each aggregate's buffer
 * @param description a line for the plan and the log
 * @param hashBuffers whether Spark's aggregate keeps its buffers as a hash aggregate does (in
 *     fixed-width rows, where a decimal past its precision becomes null) rather than as a sort
 *     aggregate does
 */
record StagePlan(
    List<Attribute> input,
    List<Step> steps,
    List<Expression> keys,
    List<AggSpec> aggs,
    List<org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression> functions,
    List<Attribute> output,
    String description,
    boolean hashBuffers)
    implements Serializable {

  /** Copies every list: the plan is shipped with its tasks, and some lists given are views. */
  StagePlan {
    input = List.copyOf(input);
    steps = List.copyOf(steps);
    keys = List.copyOf(keys);
    aggs = List.copyOf(aggs);
    functions = List.copyOf(functions);
    output = List.copyOf(output);
  }

  /** A filter ({@code condition}) or a projection ({@code project}), one of the two null. */
  record Step(Expression condition, List<NamedExpression> project) implements Serializable {
    Step {
      project = project == null ? null : List.copyOf(project);
    }
  }

  /** The output as a schema of unique names, for the pipeline. */
  StructType schema() {
    StructType s = new StructType();
    for (int i = 0; i < output.size(); i++) {
      Attribute a = output.get(i);
      s = s.add("c" + i, a.dataType(), a.nullable());
    }
    return s;
  }
}
