package dev.overlap.features;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The list column of an {@code outputCol} as Spark sees it: a dense {@code Vector} (Spark ML's
 * {@code array_to_vector} over the doubles the kernel listed) or the array itself, with the
 * features' ML attributes ({@link FeatureAttributes}); and each string index column with its
 * nominal attribute.
 */
final class FeatureVectors {
  static final String VECTOR = "vector";

  private FeatureVectors() {}

  /**
   * The metadata of each feature column that has any (a string's index: its {@code
   * NominalAttribute}), by name.
   */
  static Map<String, Metadata> columnMetadata(FeaturePlan plan) {
    Map<String, Metadata> out = new HashMap<>();
    StructField[] features = FeatureNames.schema(plan).fields();
    for (int i = 0; i < features.length; i++) {
      Metadata m = FeatureAttributes.column(plan, i);
      if (!m.equals(Metadata.empty())) {
        out.put(features[i].name(), m);
      }
    }
    return out;
  }

  /**
   * The output's schema as Spark sees it: the kernel's ({@link FeatureLayout#kernelSchema}) with
   * the list column a vector when {@code outputType} says so, and the features' ML attributes
   * ({@link FeatureAttributes}).
   */
  static StructType schema(FeatureLayout layout, FeaturePlan plan, String outputType) {
    StructType kernel = layout.kernelSchema(plan);
    Map<String, Metadata> columns = layout.listName == null ? columnMetadata(plan) : Map.of();
    StructType out = new StructType();
    for (StructField f : kernel.fields()) {
      if (f.name().equals(layout.listName)) {
        Metadata meta = FeatureAttributes.vector(layout.listName, plan);
        // A vector comes from Spark ML's array_to_vector, whose result Spark counts as nullable.
        boolean vector = outputType.equals(VECTOR);
        out = out.add(f.name(), vector ? SQLDataTypes.VectorType() : f.dataType(), vector, meta);
      } else if (columns.containsKey(f.name())) {
        out = out.add(f.name(), f.dataType(), f.nullable(), columns.get(f.name()));
      } else {
        out = out.add(f);
      }
    }
    return out;
  }

  /** The kernel's output {@code mapped} with its columns as {@link #schema} has them. */
  static Dataset<Row> spark(
      Dataset<Row> mapped, FeatureLayout layout, FeaturePlan plan, String outputType) {
    Map<String, Metadata> columns = layout.listName == null ? columnMetadata(plan) : Map.of();
    if (layout.listName == null && columns.isEmpty()) {
      return mapped;
    }
    List<Column> cols = new ArrayList<>();
    for (String c : mapped.columns()) {
      Column x = mapped.col(InputColumns.quote(c));
      if (c.equals(layout.listName)) {
        Metadata meta = FeatureAttributes.vector(layout.listName, plan);
        cols.add(
            outputType.equals(VECTOR)
                ? org.apache.spark.ml.functions.array_to_vector(x).as(c, meta)
                : x.as(c, meta));
      } else if (columns.containsKey(c)) {
        cols.add(x.as(c, columns.get(c)));
      } else {
        cols.add(x);
      }
    }
    return mapped.select(cols.toArray(new Column[0]));
  }
}
