package dev.overlap.features;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.GroupByAggregation;
import ai.rapids.cudf.GroupByOptions;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.CpuKernel;
import dev.overlap.executor.api.GpuKernel;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The exact count, per batch, of each candidate value of some string columns: rows {@code (col,
 * value, n)} for the candidates present in the batch. Input column {@code j} is the plan's column
 * {@code cols[j]}; its candidates are {@code candidates.get(j)}.
 */
final class VocabCountKernel implements GpuKernel {
  static final StructType COUNTS =
      new StructType()
          .add("col", DataTypes.IntegerType, false)
          .add("value", DataTypes.StringType, false)
          .add("n", DataTypes.LongType, false);

  private final int[] cols;
  private final List<List<String>> candidates;

  VocabCountKernel(int[] cols, List<List<String>> candidates) {
    this.cols = cols;
    this.candidates = candidates;
  }

  @Override
  public StructType outputSchema(StructType input) {
    return COUNTS;
  }

  @Override
  public CpuKernel cpu() {
    int[] c = cols;
    List<List<String>> v = candidates;
    return rows -> CpuFirstPass.counts(c, v, rows);
  }

  @Override
  public Table apply(Table in) {
    GroupByOptions opts = GroupByOptions.builder().withIgnoreNullKeys(true).build();
    List<Table> parts = new ArrayList<>();
    try {
      for (int j = 0; j < cols.length; j++) {
        ColumnVector x = in.getColumn(j);
        try (ColumnVector wanted =
                ColumnVector.fromStrings(candidates.get(j).toArray(new String[0]));
            ColumnVector found = x.contains(wanted);
            Table one = new Table(x);
            Table kept = one.filter(found);
            Table counted =
                kept.groupBy(opts, 0).aggregate(GroupByAggregation.count().onColumn(0));
            ColumnVector n = counted.getColumn(1).castTo(DType.INT64);
            Scalar col = Scalar.fromInt(cols[j]);
            ColumnVector c = ColumnVector.fromScalar(col, (int) counted.getRowCount())) {
          parts.add(new Table(c, counted.getColumn(0), n));
        }
      }
      return parts.size() == 1 ? parts.remove(0) : Table.concatenate(parts.toArray(new Table[0]));
    } finally {
      parts.forEach(Table::close);
    }
  }
}
