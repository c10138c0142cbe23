package example;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.CpuKernel;
import dev.overlap.executor.api.GpuKernel;
import java.math.BigDecimal;
import java.util.Collections;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/** sum(price * discount) of each batch: two decimal columns of scale 2 in, one row out. */
public final class Revenue implements GpuKernel {
  private static final long serialVersionUID = 1L; // kernels are sent to the executors

  @Override
  public StructType outputSchema(StructType in) {
    boolean money = in.size() == 2;
    for (StructField f : in.fields()) {
      money &= f.dataType() instanceof DecimalType d && d.scale() == 2 && d.precision() <= 18;
    }
    if (!money) {
      throw new IllegalArgumentException("Revenue needs two decimal(p <= 18, 2) columns: " + in);
    }
    return new StructType().add("revenue", DataTypes.createDecimalType(18, 4));
  }

  @Override
  public Table apply(Table in) { // runs on one of the executor's GPU compute threads
    DType scale4 = DType.create(DType.DTypeEnum.DECIMAL64, -4);
    try (ColumnVector r = in.getColumn(0).binaryOp(BinaryOp.MUL, in.getColumn(1), scale4);
        Scalar sum = r.sum(scale4);
        ColumnVector s = ColumnVector.fromScalar(sum, 1)) {
      return new Table(s); // the input belongs to the pipeline: do not close it
    }
  }

  @Override
  public CpuKernel cpu() { // the same sum on executors without a GPU, one row per partition
    return rows -> {
      if (!rows.hasNext()) {
        return Collections.emptyIterator(); // an empty partition has no batch on the GPU either
      }
      BigDecimal sum = null; // as on the GPU: nulls are skipped, and no value at all gives null
      while (rows.hasNext()) {
        Row row = rows.next();
        if (!row.isNullAt(0) && !row.isNullAt(1)) {
          BigDecimal p = row.getDecimal(0).multiply(row.getDecimal(1));
          sum = sum == null ? p : sum.add(p);
        }
      }
      Row total = RowFactory.create(sum == null ? null : sum.setScale(4));
      return List.of(total).iterator();
    };
  }
}
