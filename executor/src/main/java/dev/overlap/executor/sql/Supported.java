package dev.overlap.executor.sql;

import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Add;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.BinaryArithmetic;
import org.apache.spark.sql.catalyst.expressions.BinaryComparison;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.EqualNullSafe;
import org.apache.spark.sql.catalyst.expressions.EvalMode;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.In;
import org.apache.spark.sql.catalyst.expressions.IsNotNull;
import org.apache.spark.sql.catalyst.expressions.IsNull;
import org.apache.spark.sql.catalyst.expressions.KnownNotNull;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Multiply;
import org.apache.spark.sql.catalyst.expressions.Not;
import org.apache.spark.sql.catalyst.expressions.Or;
import org.apache.spark.sql.catalyst.expressions.Subtract;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.TimestampType;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Which of Spark's expressions the GPU evaluates exactly as Spark does ({@link GpuEval}): {@link
 * #why} says why one is not, naming the expression. Checked on the driver when a plan is compiled;
 * a value the types do not bound is checked again per batch ({@link DecimalMath}).
 */
final class Supported {
  private Supported() {}

  /** Why {@code e} is not evaluated on the GPU, or null when it and all its children are. */
  static String why(Expression e) {
    String own = own(e);
    if (own != null) {
      return own + ": " + e.sql();
    }
    for (Expression c : CollectionConverters.asJava(e.children())) {
      String w = why(c);
      if (w != null) {
        return w;
      }
    }
    return null;
  }

  /** Whether a column of {@code t} is carried: flat types of the default collation. */
  static boolean carried(DataType t) {
    return t instanceof BooleanType
        || t instanceof ByteType
        || t instanceof ShortType
        || t instanceof IntegerType
        || t instanceof LongType
        || t instanceof FloatType
        || t instanceof DoubleType
        || t instanceof DecimalType
        || t instanceof DateType
        || t instanceof TimestampType
        || DataTypes.StringType.equals(t);
  }

  static boolean floating(DataType t) {
    return t instanceof FloatType || t instanceof DoubleType;
  }

  static boolean integral(DataType t) {
    return t instanceof ByteType
        || t instanceof ShortType
        || t instanceof IntegerType
        || t instanceof LongType;
  }

  /** Why this node itself is not evaluated, its children aside; null when it is. */
  private static String own(Expression e) {
    if (!carried(e.dataType())) {
      return "type " + e.dataType().simpleString() + " is not carried";
    }
    if (e instanceof Attribute || e instanceof KnownNotNull) {
      return null;
    }
    if (e instanceof Literal) {
      return null;
    }
    if (e instanceof And || e instanceof Or || e instanceof Not) {
      return null;
    }
    if (e instanceof IsNull || e instanceof IsNotNull) {
      return null;
    }
    if (e instanceof BinaryComparison c) {
      DataType t = c.left().dataType();
      if (!t.equals(c.right().dataType())) {
        return "a comparison of two types";
      }
      return c instanceof EqualNullSafe || isPlainComparison(c) ? null : "comparison";
    }
    if (e instanceof In in) {
      DataType t = in.value().dataType();
      for (Expression x : CollectionConverters.asJava(in.list())) {
        if (!(x instanceof Literal) || !x.dataType().equals(t)) {
          return "IN with a value that is not a literal of the same type";
        }
      }
      return null;
    }
    if (e instanceof Add || e instanceof Subtract || e instanceof Multiply) {
      return arithmetic((BinaryArithmetic) e);
    }
    if (e instanceof Cast c) {
      return Casts.why(c.child().dataType(), c.dataType());
    }
    if (GpuFunctions.handles(e)) {
      return GpuFunctions.why(e);
    }
    return "expression " + e.prettyName() + " is not built yet";
  }

  private static boolean isPlainComparison(BinaryComparison c) {
    return List.of("=", "<", "<=", ">", ">=").contains(c.symbol());
  }

  private static String arithmetic(BinaryArithmetic a) {
    DataType l = a.left().dataType();
    DataType r = a.right().dataType();
    DataType t = a.dataType();
    if (t instanceof DecimalType d) {
      if (!(l instanceof DecimalType dl) || !(r instanceof DecimalType dr)) {
        return "decimal arithmetic over a non-decimal operand";
      }
      int exact =
          a instanceof Multiply ? dl.scale() + dr.scale() : Math.max(dl.scale(), dr.scale());
      if (d.scale() != exact) {
        return "decimal arithmetic that rounds to scale " + d.scale() + " is not built yet";
      }
      return null;
    }
    if (!l.equals(t) || !r.equals(t)) {
      return "arithmetic over operands of another type";
    }
    if (floating(t)) {
      return null;
    }
    if (integral(t)) {
      return a.evalMode() == EvalMode.LEGACY()
          ? null
          : "integer arithmetic with overflow checks (spark.sql.ansi.enabled) is not built yet";
    }
    return "arithmetic over " + t.simpleString();
  }
}
