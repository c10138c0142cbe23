package dev.overlap.features;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.ml.attribute.Attribute;
import org.apache.spark.ml.attribute.AttributeGroup;
import org.apache.spark.ml.attribute.NominalAttribute;
import org.apache.spark.ml.attribute.NumericAttribute;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;

/**
 * The features' ML attributes, as Spark ML's own stages write them, so that later stages know what
 * each column or slot holds: a string's index is nominal ({@code NominalAttribute}, as {@code
 * StringIndexer} writes it: its name and the vocabulary in index order, then the unseen slot),
 * every other feature numeric and named. The vector's slots carry the same attributes ({@code
 * AttributeGroup}, as {@code VectorAssembler} writes them), so tree models see a string's index as
 * categorical without {@code VectorIndexer}.
 */
final class FeatureAttributes {
  /** The unseen slot's name, {@code StringIndexer}'s. */
  static final String UNSEEN = "__unknown";

  private FeatureAttributes() {}

  /**
   * The values of column {@code c}'s index, in index order: its vocabulary, then the slot of index
   * N (the vocabulary's size) where N may occur: when {@link FeaturePlan#keepInvalid} (a string
   * outside the vocabulary gets N), or when the column has missing values (a null gets N). The slot
   * is named {@value #UNSEEN}, or {@code __unknown_2}, … if the vocabulary holds that value.
   */
  static String[] indexValues(FeaturePlan plan, FeaturePlan.Column c) {
    List<String> values = new ArrayList<>(c.vocabulary);
    if (plan.keepInvalid || c.nullable) {
      String unseen = UNSEEN;
      for (int k = 2; values.contains(unseen); k++) {
        unseen = UNSEEN + "_" + k;
      }
      values.add(unseen);
    }
    return values.toArray(new String[0]);
  }

  /** Each feature's attribute, in {@link FeatureNames#schema}'s order. */
  static List<Attribute> all(FeaturePlan plan) {
    StructField[] fields = FeatureNames.schema(plan).fields();
    List<FeaturePlan.Column> owners = FeatureNames.owners(plan);
    List<String> suffixes = FeatureNames.suffixes(plan);
    List<Attribute> out = new ArrayList<>();
    for (int i = 0; i < fields.length; i++) {
      String name = fields[i].name();
      if (suffixes.get(i).equals("idx")) {
        NominalAttribute a = NominalAttribute.defaultAttr().withName(name);
        // A plan not yet fitted (the estimator's transformSchema) knows no values, as
        // StringIndexer.
        out.add(plan.fittedAt == 0 ? a : a.withValues(indexValues(plan, owners.get(i))));
      } else {
        out.add(NumericAttribute.defaultAttr().withName(name));
      }
    }
    return out;
  }

  /** The metadata of feature column {@code at} ({@link FeatureNames#schema}'s order). */
  static Metadata column(FeaturePlan plan, int at) {
    return FeatureNames.suffixes(plan).get(at).equals("idx")
        ? all(plan).get(at).toMetadata()
        : Metadata.empty();
  }

  /** The vector {@code name}'s attributes: those of {@link FeatureNames#numeric}'s features. */
  static Metadata vector(String name, FeaturePlan plan) {
    List<Attribute> all = all(plan);
    List<Attribute> slots = new ArrayList<>();
    FeatureNames.numeric(plan).forEach(i -> slots.add(all.get(i)));
    return new AttributeGroup(name, slots.toArray(new Attribute[0])).toMetadata();
  }
}
