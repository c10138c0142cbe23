package dev.overlap.executor.sql;

import dev.overlap.executor.api.CpuKernel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.BasePredicate;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.MutableProjection;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.Predicate;
import org.apache.spark.sql.catalyst.expressions.SpecificInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.expressions.aggregate.DeclarativeAggregate;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.Function1;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A compiled stage on the CPU, through Spark's own evaluation of the same expressions: its
 * predicates and projections, and each aggregate's initial values and update expressions over a
 * buffer per group, as Spark's partial aggregate runs them. The kernel's CPU implementation, for
 * executors without a GPU and batches the GPU leaves ({@link dev.overlap.executor.api.CpuInstead}).
 */
final class CpuStage implements CpuKernel {
  private static final long serialVersionUID = 1L;

  private final StagePlan plan;

  CpuStage(StagePlan plan) {
    this.plan = plan;
  }

  @Override
  public Iterator<Row> apply(Iterator<Row> rows) {
    StructType inSchema = schemaOf(plan.input());
    Function1<Object, Object> toCatalyst =
        CatalystTypeConverters.createToCatalystConverter(inSchema);
    List<Attribute> attrs = plan.input();
    List<Step> steps = new ArrayList<>();
    for (StagePlan.Step s : plan.steps()) {
      if (s.condition() != null) {
        BasePredicate p = Predicate.create(s.condition(), seq(attrs));
        p.initialize(0);
        steps.add(r -> p.eval(r) ? r : null);
      } else {
        UnsafeProjection proj = UnsafeProjection.create(exprs(s.project()), seq(attrs));
        proj.initialize(0);
        steps.add(proj::apply);
        attrs = s.project().stream().map(NamedExpression::toAttribute).toList();
      }
    }
    UnsafeProjection keys = UnsafeProjection.create(seq(plan.keys()), seq(attrs));
    List<DeclarativeAggregate> fns =
        plan.functions().stream().map(a -> (DeclarativeAggregate) a.aggregateFunction()).toList();
    List<Attribute> bufferAttrs = new ArrayList<>();
    List<Expression> init = new ArrayList<>();
    List<Expression> update = new ArrayList<>();
    for (DeclarativeAggregate f : fns) {
      bufferAttrs.addAll(CollectionConverters.asJava(f.aggBufferAttributes()));
      init.addAll(CollectionConverters.asJava(f.initialValues()));
      update.addAll(CollectionConverters.asJava(f.updateExpressions()));
    }
    List<Attribute> joined = new ArrayList<>(bufferAttrs);
    joined.addAll(attrs);
    MutableProjection initial = MutableProjection.create(seq(init), seq(List.of()));
    MutableProjection updater = MutableProjection.create(seq(update), seq(joined));
    List<DataType> bufferTypes = bufferAttrs.stream().map(Attribute::dataType).toList();
    Map<UnsafeRow, InternalRow> groups = new LinkedHashMap<>();
    JoinedRow pair = new JoinedRow();
    while (rows.hasNext()) {
      InternalRow r = (InternalRow) toCatalyst.apply(rows.next());
      for (Step s : steps) {
        r = r == null ? null : s.apply(r);
      }
      if (r == null) {
        continue;
      }
      UnsafeRow key = keys.apply(r);
      InternalRow buffer = groups.get(key);
      if (buffer == null) {
        buffer = newBuffer(bufferTypes);
        initial.target(buffer).apply(InternalRow.empty());
        groups.put(key.copy(), buffer);
      }
      updater.target(buffer).apply(pair.apply(buffer, r));
    }
    if (groups.isEmpty() && plan.keys().isEmpty()) {
      InternalRow buffer = newBuffer(bufferTypes);
      initial.target(buffer).apply(InternalRow.empty());
      groups.put(keys.apply(InternalRow.empty()).copy(), buffer);
    }
    Function1<Object, Object> toRow = CatalystTypeConverters.createToScalaConverter(plan.schema());
    List<Row> out = new ArrayList<>(groups.size());
    groups.forEach((k, b) -> out.add((Row) toRow.apply(new JoinedRow(k, b))));
    return out.iterator();
  }

  /**
   * A group's buffer as Spark's aggregate keeps it: for a hash aggregate a fixed-width row, where a
   * decimal set past its precision becomes null; for a sort aggregate a row of any values.
   */
  private InternalRow newBuffer(List<DataType> types) {
    SpecificInternalRow row = new SpecificInternalRow(seq(types));
    if (!plan.hashBuffers()) {
      return row;
    }
    return UnsafeProjection.create(types.toArray(new DataType[0])).apply(row).copy();
  }

  /** One filter (null for a row it drops) or projection. */
  private interface Step {
    InternalRow apply(InternalRow r);
  }

  private static StructType schemaOf(List<Attribute> attrs) {
    StructField[] f = new StructField[attrs.size()];
    for (int i = 0; i < f.length; i++) {
      Attribute a = attrs.get(i);
      f[i] = new StructField("c" + i, a.dataType(), a.nullable(), a.metadata());
    }
    return new StructType(f);
  }

  private static Seq<Expression> exprs(List<NamedExpression> l) {
    return seq(l.stream().map(e -> (Expression) e).toList());
  }

  @SuppressWarnings("unchecked")
  private static <T> Seq<T> seq(List<? extends T> l) {
    return (Seq<T>) CollectionConverters.asScala(l).toSeq();
  }
}
