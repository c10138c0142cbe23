package dev.overlap.features;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The names and types of a plan's features, the output schema {@link FeatureKernel} and {@link
 * CpuFeatures} produce. A feature is named after its column with a suffix ({@code a_std}); a name
 * that equals, ignoring case (as Spark resolves names by default), the name of any input column or
 * of an earlier feature takes the first free suffix {@code _2}, {@code _3}, … instead: with inputs
 * {@code a} and {@code a_std}, the standardized {@code a} is {@code a_std_2}.
 */
final class FeatureNames {
  private FeatureNames() {}

  /** The names of column {@code c}'s features, in output order. */
  static List<String> of(FeaturePlan plan, FeaturePlan.Column c) {
    List<String> names = new ArrayList<>();
    StructField[] out = schema(plan).fields();
    List<FeaturePlan.Column> owners = owners(plan);
    for (int i = 0; i < out.length; i++) {
      if (owners.get(i) == c) {
        names.add(out[i].name());
      }
    }
    return names;
  }

  /**
   * The positions in {@link #schema} of the features a number holds, the list column's (an {@code
   * outputCol}'s): every feature but the imputed values of dates, timestamps and strings, and each
   * input once: a number's {@code _imputed} only where it has no {@code _std}, an affine function
   * of it on every row (unless the plan is of a model saved when the vector held both). Booleans
   * count as 1 and 0.
   */
  static List<Integer> numeric(FeaturePlan plan) {
    List<Integer> at = new ArrayList<>();
    StructField[] all = schema(plan).fields();
    List<FeaturePlan.Column> owners = owners(plan);
    List<String> suffixes = suffixes(plan);
    for (int i = 0; i < all.length; i++) {
      DataType t = all[i].dataType();
      FeaturePlan.Column c = owners.get(i);
      boolean twice =
          suffixes.get(i).equals("imputed")
              && c.kind == FeaturePlan.Kind.NUMERIC
              && plan.kindFeatures(c).contains("std")
              && !plan.imputedInVector;
      if (!twice
          && (t == DataTypes.DoubleType
              || t == DataTypes.IntegerType
              || t == DataTypes.BooleanType)) {
        at.add(i);
      }
    }
    return at;
  }

  /** For each feature, in output order, its suffix without the underscore ({@code std}). */
  static List<String> suffixes(FeaturePlan plan) {
    List<String> out = new ArrayList<>();
    for (FeaturePlan.Column c : plan.columns) {
      out.addAll(plan.kindFeatures(c));
      if (c.nullable) {
        out.add("isnull");
        out.add("imputed");
      }
    }
    return out;
  }

  /** The names of {@link #numeric}'s features, in their order. */
  static List<String> numericNames(FeaturePlan plan) {
    StructField[] all = schema(plan).fields();
    return numeric(plan).stream().map(i -> all[i].name()).toList();
  }

  /** For each feature, in output order, the column it was made of. */
  static List<FeaturePlan.Column> owners(FeaturePlan plan) {
    List<FeaturePlan.Column> owners = new ArrayList<>();
    for (FeaturePlan.Column c : plan.columns) {
      for (int k = naturalFeatures(plan, c).size(); k > 0; k--) {
        owners.add(c);
      }
    }
    return owners;
  }

  /** The features, named as the class comment says. */
  static StructType schema(FeaturePlan plan) {
    List<StructField> natural = new ArrayList<>();
    for (FeaturePlan.Column c : plan.columns) {
      natural.addAll(naturalFeatures(plan, c));
    }
    return renamed(plan, natural);
  }

  /** Column {@code c}'s features under their natural names, before any renaming. */
  private static List<StructField> naturalFeatures(FeaturePlan plan, FeaturePlan.Column c) {
    List<StructField> natural = new ArrayList<>();
    for (String f : plan.kindFeatures(c)) {
      // A null date or timestamp has null parts; a number's and a string's features are never null.
      boolean nullable = !List.of("std", "log1p", "idx").contains(f);
      natural.add(field(c, "_" + f, kindFeatureType(f), nullable));
    }
    if (c.nullable) {
      natural.add(field(c, "_isnull", DataTypes.BooleanType, false));
      natural.add(field(c, "_imputed", FeatureKinds.imputedType(c.kind), false));
    }
    return natural;
  }

  /** A kind feature's type: double for a number's, int for the others. */
  private static DataType kindFeatureType(String suffix) {
    return suffix.equals("std") || suffix.equals("log1p")
        ? DataTypes.DoubleType
        : DataTypes.IntegerType;
  }

  /** The features with names that collide taking the first free suffix. */
  private static StructType renamed(FeaturePlan plan, List<StructField> natural) {
    // A renamed feature also avoids every feature's own name, so it cannot take a later one's.
    Set<String> reserved = ignoringCase(plan.inputNames);
    natural.forEach(f -> reserved.add(f.name()));
    Set<String> taken = ignoringCase(plan.inputNames);
    StructType s = new StructType();
    for (StructField f : natural) {
      String name = f.name();
      for (int k = 2; taken.contains(name); k++) {
        String candidate = f.name() + "_" + k;
        if (!reserved.contains(candidate)) {
          name = candidate;
        }
      }
      taken.add(name);
      s = s.add(name, f.dataType(), f.nullable());
    }
    return s;
  }

  private static StructField field(
      FeaturePlan.Column c, String suffix, DataType type, boolean nullable) {
    return DataTypes.createStructField(c.name + suffix, type, nullable);
  }

  /** A set of names that compares them as Spark does by default, ignoring case. */
  private static Set<String> ignoringCase(List<String> names) {
    Set<String> s = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    s.addAll(names);
    return s;
  }
}
