package dev.overlap.executor.testing;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Rows with nested and binary columns, nulls at every level: a null list, an empty list and a list
 * holding nulls; structs three levels deep; maps with null values; binary, empty and null.
 */
public final class NestedData {
  private NestedData() {}

  static final StructType INNER =
      new StructType()
          .add("c", DataTypes.StringType)
          .add("d", DataTypes.createArrayType(DataTypes.IntegerType, true));

  public static final StructType SCHEMA =
      new StructType()
          .add("id", DataTypes.LongType, false)
          .add("tags", DataTypes.createArrayType(DataTypes.StringType, true))
          .add("emb", DataTypes.createArrayType(DataTypes.FloatType, false))
          .add("rec", new StructType().add("a", DataTypes.IntegerType).add("b", INNER))
          .add("props", DataTypes.createMapType(DataTypes.StringType, DataTypes.StringType, true))
          .add("blob", DataTypes.BinaryType);

  /** Row {@code i}: its shape cycles through the null and empty cases. */
  public static Row row(long i) {
    int k = (int) (i % 7);
    List<String> tags =
        switch (k) {
          case 0 -> null;
          case 1 -> List.of();
          case 2 -> Arrays.asList("a" + i, null, "b");
          default -> List.of("t" + i);
        };
    List<Float> emb = k == 3 ? null : List.of(i * 0.5f, -1f, Float.NaN);
    Row inner =
        switch (k) {
          case 4 -> null;
          case 5 -> RowFactory.create(null, Arrays.asList(1, null, 3));
          default -> RowFactory.create("c" + i, k == 6 ? List.of() : null);
        };
    Row rec = k == 0 ? null : RowFactory.create(k == 1 ? null : (int) i, inner);
    Map<String, String> props = null;
    if (k != 2) {
      props = new HashMap<>();
      props.put("k" + i, k == 3 ? null : "v" + i);
      if (k == 4) {
        props.clear();
      }
    }
    byte[] blob = k == 5 ? null : k == 6 ? new byte[0] : new byte[] {(byte) i, 0, (byte) -i};
    return RowFactory.create(i, tags, emb, rec, props, blob);
  }

  public static Dataset<Row> frame(SparkSession spark, int rows, int partitions) {
    List<Row> out = new ArrayList<>();
    for (long i = 0; i < rows; i++) {
      out.add(row(i));
    }
    return spark.createDataFrame(out, SCHEMA).repartition(partitions);
  }
}
