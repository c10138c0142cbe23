package dev.overlap.features;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.GroupByAggregation;
import ai.rapids.cudf.GroupByOptions;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The exact count, per batch, of each candidate value of some string columns: rows {@code (col,
 * value, n)} for the candidates present in the batch. Input column {@code j} holds the values of
 * {@code wanted.get(j)}.
 */
final class VocabCountKernel extends PartialsKernel {
  static final StructType COUNTS =
      new StructType()
          .add("col", DataTypes.IntegerType, false)
          .add("value", DataTypes.StringType, false)
          .add("n", DataTypes.LongType, false);

  /** The values of the plan's column {@code col} whose exact counts are wanted. */
  record Candidates(int col, List<String> values) implements Serializable {}

  private final List<Candidates> wanted;

  VocabCountKernel(List<Candidates> wanted) {
    super(COUNTS, rows -> CpuFirstPass.counts(wanted, rows));
    this.wanted = wanted;
  }

  @Override
  public Table apply(Table in) {
    GroupByOptions opts = GroupByOptions.builder().withIgnoreNullKeys(true).build();
    List<Table> parts = new ArrayList<>();
    try {
      for (int j = 0; j < wanted.size(); j++) {
        ColumnVector x = in.getColumn(j);
        try (ColumnVector values =
                ColumnVector.fromStrings(wanted.get(j).values().toArray(new String[0]));
            ColumnVector found = x.contains(values);
            Table one = new Table(x);
            Table kept = one.filter(found);
            Table counted =
                kept.groupBy(opts, 0).aggregate(GroupByAggregation.count().onColumn(0));
            ColumnVector n = counted.getColumn(1).castTo(DType.INT64);
            Scalar col = Scalar.fromInt(wanted.get(j).col());
            ColumnVector c = ColumnVector.fromScalar(col, (int) counted.getRowCount())) {
          parts.add(new Table(c, counted.getColumn(0), n));
        }
      }
      return asOneTable(parts);
    } finally {
      parts.forEach(Table::close);
    }
  }
}
