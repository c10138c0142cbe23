package dev.overlap.executor.sql;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.CpuInstead;
import dev.overlap.executor.api.CpuKernel;
import dev.overlap.executor.api.GpuKernel;
import dev.overlap.executor.resource.Closing;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.types.StructType;

/**
 * A compiled stage ({@link StagePlan}) as a kernel: per batch, its filters and projections, then
 * its partial aggregates, on the GPU; {@link #cpu()} does the same through Spark's own evaluation.
 */
final class StageKernel implements GpuKernel {
  private static final long serialVersionUID = 1L;

  private final StagePlan plan;
  // This task's order-sensitive sums so far; the kernel is deserialized per task.
  private transient RunningSums sums;

  StageKernel(StagePlan plan) {
    this.plan = plan;
  }

  @Override
  public StructType outputSchema(StructType input) {
    return plan.schema();
  }

  @Override
  public String name() {
    return "OverlapStage";
  }

  @Override
  public Table apply(Table in) {
    List<GpuEval> evals = new ArrayList<>();
    try {
      Map<ExprId, ColumnVector> env = new HashMap<>();
      for (int i = 0; i < plan.input().size(); i++) {
        env.put(plan.input().get(i).exprId(), in.getColumn(i));
      }
      GpuEval g = new GpuEval(env, (int) in.getRowCount());
      evals.add(g);
      for (StagePlan.Step s : plan.steps()) {
        env = s.condition() != null ? filter(g, env, s) : project(g, env, s.project());
        if (s.condition() != null) {
          int rows = env.isEmpty() ? 0 : (int) env.values().iterator().next().getRowCount();
          g = new GpuEval(env, rows);
          evals.add(g);
        } else {
          g = new GpuEval(env, g.rows());
          evals.add(g);
        }
      }
      if (sums == null) {
        sums = new RunningSums();
      }
      return GpuAggregates.of(g, plan.keys(), plan.aggs(), sums);
    } catch (CpuInstead e) {
      // With a running sum, the CPU must add from the partition's start, as Spark does.
      if (!e.fromStartOnly() && plan.aggs().stream().anyMatch(a -> a.runningBound() != null)) {
        throw new CpuInstead(e.getMessage(), true);
      }
      throw e;
    } finally {
      // The last evaluation first: its columns may be views of an earlier one's.
      java.util.Collections.reverse(evals);
      Closing.all(evals);
    }
  }

  /** The rows that pass the step's condition, every column of {@code env}, as a new env. */
  private static Map<ExprId, ColumnVector> filter(
      GpuEval g, Map<ExprId, ColumnVector> env, StagePlan.Step s) {
    ColumnVector mask = g.column(s.condition());
    List<ExprId> ids = new ArrayList<>(env.keySet());
    Map<ExprId, ColumnVector> out = new HashMap<>();
    if (ids.isEmpty()) {
      return out;
    }
    ColumnVector[] cols = ids.stream().map(env::get).toArray(ColumnVector[]::new);
    try (Table t = new Table(cols);
        Table kept = t.filter(mask)) {
      // Owned by the evaluation as each is taken, so that none leaks should a later one fail.
      Holder held = g.own(new Holder(new HashMap<>()));
      for (int i = 0; i < ids.size(); i++) {
        ColumnVector c = kept.getColumn(i).incRefCount();
        held.cols().put(ids.get(i), c);
        out.put(ids.get(i), c);
      }
    }
    return out;
  }

  /** The projection's columns, evaluated in {@code g}, as a new env. */
  private static Map<ExprId, ColumnVector> project(
      GpuEval g, Map<ExprId, ColumnVector> env, List<NamedExpression> project) {
    Map<ExprId, ColumnVector> out = new HashMap<>();
    for (NamedExpression ne : project) {
      ColumnVector c =
          ne instanceof Alias a ? g.column(a.child()) : env.get(((Attribute) ne).exprId());
      out.put(ne.exprId(), c);
    }
    return out;
  }

  @Override
  public CpuKernel cpu() {
    return new CpuStage(plan);
  }

  /** The columns a filter made, closed with the evaluation that owns this. */
  private record Holder(Map<ExprId, ColumnVector> cols) implements AutoCloseable {
    @Override
    public void close() {
      cols.values().forEach(ColumnVector::close);
    }
  }
}
