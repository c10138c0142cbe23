package dev.overlap.executor.testing;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.CpuKernel;
import dev.overlap.executor.api.GpuKernel;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Test kernel over {@link TestData#SCHEMA}: every input column unchanged (the round trip of every
 * type) plus a few computed columns. The same columns in Spark SQL are {@link #SQL}.
 */
public final class AllTypesKernel implements GpuKernel {
  private static final long serialVersionUID = 1L;

  /** The computation, as Spark SQL over the input, for comparison. */
  public static final String[] SQL = {
    "*",
    "i64 + cast(i32 as bigint) as sum64",
    "f64 * 2.0 as f64x2",
    "length(s) as slen",
    "not b as nb",
    "i32 is null as i32null",
    "hour(ntz) as ntzhour"
  };

  /** Whether the input has the ntz column, and the output its hour. */
  private final boolean ntz;

  public AllTypesKernel() {
    this(true);
  }

  private AllTypesKernel(boolean ntz) {
    this.ntz = ntz;
  }

  /**
   * The kernel over {@link TestData#SCHEMA} without its last columns (from dec38 on, the types the
   * RAPIDS Accelerator does not export as device batches): no ntzhour. Its SQL is {@link
   * #SQL_WITHOUT_NTZ}.
   */
  public static AllTypesKernel withoutNtz() {
    return new AllTypesKernel(false);
  }

  /** {@link #SQL} without its last column, for {@link #withoutNtz()}. */
  public static final String[] SQL_WITHOUT_NTZ = java.util.Arrays.copyOf(SQL, SQL.length - 1);

  @Override
  public StructType outputSchema(StructType input) {
    StructType out =
        input
            .add("sum64", DataTypes.LongType)
            .add("f64x2", DataTypes.DoubleType)
            .add("slen", DataTypes.IntegerType)
            .add("nb", DataTypes.BooleanType)
            .add("i32null", DataTypes.BooleanType, false);
    return ntz ? out.add("ntzhour", DataTypes.IntegerType) : out;
  }

  @Override
  public Table apply(Table in) {
    int n = in.getNumberOfColumns();
    List<ColumnVector> made = new ArrayList<>();
    try (Scalar two = Scalar.fromDouble(2.0)) {
      ColumnVector i64 = in.getColumn(TestData.col("i64"));
      ColumnVector i32 = in.getColumn(TestData.col("i32"));
      made.add(i64.binaryOp(BinaryOp.ADD, i32, DType.INT64));
      made.add(in.getColumn(TestData.col("f64")).binaryOp(BinaryOp.MUL, two, DType.FLOAT64));
      made.add(in.getColumn(TestData.col("s")).getCharLengths());
      made.add(in.getColumn(TestData.col("b")).not());
      made.add(i32.isNull());
      if (ntz) {
        // A TIMESTAMP_NTZ column arrives as TIMESTAMP_MICROSECONDS: its UTC hour is the wall
        // clock's.
        try (ColumnVector hour = in.getColumn(TestData.col("ntz")).hour()) {
          made.add(hour.castTo(DType.INT32));
        }
      }
      ColumnVector[] all = new ColumnVector[n + made.size()];
      for (int i = 0; i < n; i++) {
        all[i] = in.getColumn(i);
      }
      for (int i = 0; i < made.size(); i++) {
        all[n + i] = made.get(i);
      }
      return new Table(all);
    } finally {
      made.forEach(ColumnVector::close);
    }
  }

  @Override
  public CpuKernel cpu() {
    boolean withNtz = ntz;
    return rows ->
        new java.util.Iterator<>() {
          @Override
          public boolean hasNext() {
            return rows.hasNext();
          }

          @Override
          public Row next() {
            Row r = rows.next();
            Object[] v = new Object[r.length() + (withNtz ? 6 : 5)];
            for (int i = 0; i < r.length(); i++) {
              v[i] = r.get(i);
            }
            int i64 = TestData.col("i64");
            int i32 = TestData.col("i32");
            int n = r.length();
            v[n] = r.isNullAt(i64) || r.isNullAt(i32) ? null : r.getLong(i64) + r.getInt(i32);
            int f = TestData.col("f64");
            v[n + 1] = r.isNullAt(f) ? null : r.getDouble(f) * 2.0;
            int s = TestData.col("s");
            v[n + 2] =
                r.isNullAt(s) ? null : r.getString(s).codePointCount(0, r.getString(s).length());
            int b = TestData.col("b");
            v[n + 3] = r.isNullAt(b) ? null : !r.getBoolean(b);
            v[n + 4] = r.isNullAt(i32);
            if (withNtz) {
              int ntz = TestData.col("ntz");
              v[n + 5] = r.isNullAt(ntz) ? null : r.<java.time.LocalDateTime>getAs(ntz).getHour();
            }
            return RowFactory.create(v);
          }
        };
  }
}
