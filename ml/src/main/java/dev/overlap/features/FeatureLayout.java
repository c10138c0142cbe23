package dev.overlap.features;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Where the features kernel finds its columns and where it puts its own, for one input: the kernel
 * takes {@link #inputNames} (every input column in input order when inputs are kept; else the
 * encoded ones, then the others), and returns the columns {@link #passed} unchanged beside the
 * features: after them when inputs are kept ({@link #inputsFirst}), before them otherwise. The
 * features come one column each, or as one LIST column {@link #listName} of every numeric feature
 * ({@link FeatureNames#numeric}), of floats or doubles.
 */
final class FeatureLayout implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The kernel's input columns, by name, in order. */
  final List<String> inputNames;

  /** For each of the plan's columns, its position among {@link #inputNames}. */
  final int[] encodedAt;

  /** The input columns returned unchanged, in input order, with their Spark types. */
  final List<StructField> passed;

  /** For each of {@link #passed}, its position among {@link #inputNames}. */
  final int[] passedAt;

  /** Whether the columns passed come before the features (inputs kept, as Spark ML does). */
  final boolean inputsFirst;

  /** The one column of every numeric feature, or null for one column per feature. */
  final String listName;

  /** Whether {@link #listName}'s values are floats (else doubles). */
  final boolean floats;

  /** The positions among the features of those the list holds ({@link FeatureNames#numeric}). */
  final List<Integer> listed;

  private FeatureLayout(
      List<String> inputNames,
      int[] encodedAt,
      List<StructField> passed,
      int[] passedAt,
      boolean inputsFirst,
      String listName,
      boolean floats,
      List<Integer> listed) {
    this.inputNames = List.copyOf(inputNames);
    this.encodedAt = encodedAt;
    this.passed = List.copyOf(passed);
    this.passedAt = passedAt;
    this.inputsFirst = inputsFirst;
    this.listName = listName;
    this.floats = floats;
    this.listed = List.copyOf(listed);
  }

  /** The encoded columns alone, in the plan's order, features one column each. */
  static FeatureLayout encodedOnly(FeaturePlan plan) {
    int[] at = new int[plan.columns.size()];
    for (int i = 0; i < at.length; i++) {
      at[i] = i;
    }
    return new FeatureLayout(
        List.of(plan.inputColumns()), at, List.of(), new int[0], false, null, false, List.of());
  }

  /**
   * The layout of {@code plan} over an input of {@code schema}: with {@code keep}, every input
   * column passed and before the features; else the columns the plan does not encode, after them.
   * {@code outputCol} empty gives one column per feature; else one column of {@code outputType}.
   *
   * @throws FeatureInputException when {@code outputCol} is the name of a column kept beside it
   */
  static FeatureLayout of(
      StructType schema, FeaturePlan plan, boolean keep, String outputCol, String outputType) {
    List<StructField> passed =
        keep ? List.of(schema.fields()) : FeatureTransform.passedThrough(schema, plan);
    List<String> names = new ArrayList<>();
    if (keep) {
      passed.forEach(f -> names.add(f.name()));
    } else {
      for (FeaturePlan.Column c : plan.columns) {
        names.add(InputColumns.field(schema, c.name).name());
      }
      passed.forEach(f -> names.add(f.name()));
    }
    int[] encodedAt = new int[plan.columns.size()];
    for (int i = 0; i < encodedAt.length; i++) {
      encodedAt[i] = names.indexOf(InputColumns.field(schema, plan.columns.get(i).name).name());
    }
    int[] passedAt = new int[passed.size()];
    for (int i = 0; i < passedAt.length; i++) {
      passedAt[i] = names.indexOf(passed.get(i).name());
    }
    String list = outputCol == null || outputCol.isEmpty() ? null : outputCol;
    List<Integer> listed = list == null ? List.of() : FeatureNames.numeric(plan);
    if (list != null) {
      Set<String> kept = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
      passed.forEach(f -> kept.add(f.name()));
      if (kept.contains(list)) {
        throw new FeatureInputException(
            "outputCol '"
                + list
                + "' is the name of an input column the output keeps; choose another name");
      }
      if (listed.isEmpty()) {
        throw new FeatureInputException(
            "outputCol '" + list + "' would hold no feature: the model makes no numeric feature");
      }
    }
    boolean floats = list != null && outputType.toLowerCase(Locale.ROOT).equals("array<float>");
    return new FeatureLayout(names, encodedAt, passed, passedAt, keep, list, floats, listed);
  }

  /** The list column's element type. */
  DataType element() {
    return floats ? DataTypes.FloatType : DataTypes.DoubleType;
  }

  /**
   * The kernel's output: the features (or their list) and the columns passed, in this layout's
   * order.
   */
  StructType kernelSchema(FeaturePlan plan) {
    StructType features =
        listName == null
            ? plan.featureOutputSchema()
            : new StructType().add(listName, DataTypes.createArrayType(element(), false), false);
    StructType out = new StructType();
    if (inputsFirst) {
      for (StructField f : passed) {
        out = out.add(f);
      }
    }
    for (StructField f : features.fields()) {
      out = out.add(f);
    }
    if (!inputsFirst) {
      for (StructField f : passed) {
        out = out.add(f);
      }
    }
    return out;
  }

  /** Where the features (or their list) start in {@link #kernelSchema}. */
  int featuresAt() {
    return inputsFirst ? passed.size() : 0;
  }
}
