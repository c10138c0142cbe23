package dev.overlap.executor.testing;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.ColumnView;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.NullPolicy;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.SegmentedReductionAggregation;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.CpuKernel;
import dev.overlap.executor.api.GpuKernel;
import dev.overlap.executor.resource.Closing;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.StructType;

/**
 * Scales each embedding (an {@code array<float>} column) to unit length: every element divided by
 * the square root of the sum of the elements' squares, summed in double precision and cast back to
 * float; the other columns pass through. A null embedding stays null, a null element null (and left
 * out of the sum). In Spark SQL: {@link #sql}.
 *
 * <p>On the GPU: the list's child cast to double and squared, a segmented sum per row, the row's
 * norm repeated once per element ({@code Table.repeat}), the division, and the child replaced.
 */
public final class NormalizeKernel implements GpuKernel {
  private static final long serialVersionUID = 1L;

  /** The same, in Spark SQL's higher-order functions, for {@code selectExpr}. */
  public static String sql(String column) {
    return "aggregate("
        + column
        + ", 0D, (a, y) -> a + coalesce(double(y) * y, 0D), a -> transform("
        + column
        + ", x -> float(x / sqrt(a)))) as "
        + column;
  }

  private final String column;
  private final int index; // the column's position in the input: a table has no names

  private NormalizeKernel(String column, int index) {
    this.column = column;
    this.index = index;
  }

  /** Normalizes column {@code column} of inputs of schema {@code input}. */
  public static NormalizeKernel of(StructType input, String column) {
    return new NormalizeKernel(column, input.fieldIndex(column));
  }

  @Override
  public StructType outputSchema(StructType input) {
    return input;
  }

  @Override
  public Table apply(Table input) {
    List<ColumnVector> out = new ArrayList<>();
    try {
      for (int c = 0; c < input.getNumberOfColumns(); c++) {
        out.add(c == index ? normalized(input.getColumn(c)) : input.getColumn(c).incRefCount());
      }
      return new Table(out.toArray(new ColumnVector[0]));
    } finally {
      Closing.all(out);
    }
  }

  /** {@code emb} with each list scaled to unit length. */
  static ColumnVector normalized(ColumnVector emb) {
    try (ColumnView child = emb.getChildColumnView(0);
        ColumnVector d = child.castTo(DType.FLOAT64);
        ColumnVector squares = d.mul(d);
        ColumnView squaredLists = emb.replaceListChild(squares);
        ColumnVector sums =
            squaredLists.listReduce(
                SegmentedReductionAggregation.sum(), NullPolicy.EXCLUDE, DType.FLOAT64);
        ColumnVector norms = sums.sqrt();
        ColumnVector sizes = emb.countElements();
        Scalar zero = Scalar.fromInt(0);
        ColumnVector counts = sizes.replaceNulls(zero);
        Table perRow = new Table(norms);
        Table perElement = perRow.repeat(counts);
        ColumnVector scaled = d.div(perElement.getColumn(0));
        ColumnVector floats = scaled.castTo(DType.FLOAT32);
        ColumnView result = emb.replaceListChild(floats)) {
      return result.copyToColumnVector();
    }
  }

  @Override
  public CpuKernel cpu() {
    String name = column;
    return rows ->
        new java.util.Iterator<Row>() {
          @Override
          public boolean hasNext() {
            return rows.hasNext();
          }

          @Override
          public Row next() {
            Row r = rows.next();
            int at = r.fieldIndex(name);
            Object[] v = new Object[r.length()];
            for (int i = 0; i < v.length; i++) {
              v[i] = r.get(i);
            }
            if (!r.isNullAt(at)) {
              List<Object> in = r.getList(at);
              double sum = 0;
              for (Object o : in) {
                if (o != null) {
                  double x = (Float) o;
                  sum += x * x;
                }
              }
              double norm = Math.sqrt(sum);
              List<Float> scaled = new ArrayList<>(in.size());
              for (Object o : in) {
                scaled.add(o == null ? null : (float) ((Float) o / norm));
              }
              v[at] = scaled;
            }
            return RowFactory.create(v);
          }
        };
  }
}
