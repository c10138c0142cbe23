package dev.overlap.jobs.etl;

import java.io.Serializable;
import org.apache.spark.sql.types.DataType;

/**
 * A money expression of etl ({@link EtlShape}): an input column, {@code 1 - x}, {@code 1 + x} or
 * {@code x * y}, with the type Spark gives it over the input. {@link GpuMoney} and {@link CpuMoney}
 * evaluate it.
 */
final class MoneyExpr implements Serializable {
  private static final long serialVersionUID = 1L;

  enum Op {
    COLUMN,
    ONE_MINUS,
    ONE_PLUS,
    TIMES
  }

  /** The expression's number in its shape, from 0 to {@link EtlShape#expressions} minus one. */
  final int id;

  final Op op;

  /** For {@link Op#COLUMN}: the kernel's input column; -1 otherwise. */
  final int column;

  final MoneyExpr left;
  final MoneyExpr right;

  /** The type Spark gives this expression over the input. */
  final MoneyType type;

  private MoneyExpr(int id, Op op, int column, MoneyExpr left, MoneyExpr right, MoneyType type) {
    this.id = id;
    this.op = op;
    this.column = column;
    this.left = left;
    this.right = right;
    this.type = type;
  }

  /** Input column {@code column}, of Spark type {@code type}. */
  static MoneyExpr column(int id, int column, DataType type) {
    return new MoneyExpr(id, Op.COLUMN, column, null, null, MoneyType.of(type));
  }

  /**
   * {@code op} over {@code left} (and {@code right} for {@link Op#TIMES}), of Spark type {@code
   * type}.
   */
  static MoneyExpr of(int id, Op op, MoneyExpr left, MoneyExpr right, DataType type) {
    return new MoneyExpr(id, op, -1, left, right, MoneyType.of(type));
  }

  /** The scale of the exact result before it is brought to Spark's scale. */
  int exactScale() {
    switch (op) {
      case COLUMN:
        return type.scale();
      case ONE_MINUS:
      case ONE_PLUS:
        return left.type.scale();
      default:
        return left.type.scale() + right.type.scale();
    }
  }
}
