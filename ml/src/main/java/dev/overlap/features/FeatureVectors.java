package dev.overlap.features;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.ml.attribute.Attribute;
import org.apache.spark.ml.attribute.AttributeGroup;
import org.apache.spark.ml.attribute.NumericAttribute;
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
 * features' names as ML attributes ({@code AttributeGroup}), as {@code VectorAssembler} writes them
 * for the same feature columns, so that later stages see which slot is which feature.
 */
final class FeatureVectors {
  static final String VECTOR = "vector";

  private FeatureVectors() {}

  /** The ML attributes of {@code name}'s slots: one numeric attribute per feature, named. */
  static Metadata attributes(String name, List<String> features) {
    List<Attribute> attrs = new ArrayList<>();
    features.forEach(f -> attrs.add(NumericAttribute.defaultAttr().withName(f)));
    return new AttributeGroup(name, attrs.toArray(new Attribute[0])).toMetadata();
  }

  /**
   * The output's schema as Spark sees it: the kernel's ({@link FeatureLayout#kernelSchema}) with
   * the list column a vector when {@code outputType} says so, and its attributes.
   */
  static StructType schema(FeatureLayout layout, FeaturePlan plan, String outputType) {
    StructType kernel = layout.kernelSchema(plan);
    if (layout.listName == null) {
      return kernel;
    }
    StructType out = new StructType();
    Metadata meta = attributes(layout.listName, FeatureNames.numericNames(plan));
    for (StructField f : kernel.fields()) {
      if (f.name().equals(layout.listName)) {
        // A vector comes from Spark ML's array_to_vector, whose result Spark counts as nullable.
        boolean vector = outputType.equals(VECTOR);
        out = out.add(f.name(), vector ? SQLDataTypes.VectorType() : f.dataType(), vector, meta);
      } else {
        out = out.add(f);
      }
    }
    return out;
  }

  /** The kernel's output {@code mapped} with its list column as {@link #schema} has it. */
  static Dataset<Row> spark(
      Dataset<Row> mapped, FeatureLayout layout, FeaturePlan plan, String outputType) {
    if (layout.listName == null) {
      return mapped;
    }
    Metadata meta = attributes(layout.listName, FeatureNames.numericNames(plan));
    List<Column> cols = new ArrayList<>();
    for (String c : mapped.columns()) {
      Column x = mapped.col(InputColumns.quote(c));
      if (!c.equals(layout.listName)) {
        cols.add(x);
      } else if (outputType.equals(VECTOR)) {
        cols.add(org.apache.spark.ml.functions.array_to_vector(x).as(c, meta));
      } else {
        cols.add(x.as(c, meta));
      }
    }
    return mapped.select(cols.toArray(new Column[0]));
  }
}
