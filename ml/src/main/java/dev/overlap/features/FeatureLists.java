package dev.overlap.features;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.ColumnView;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.Scalar;
import java.util.ArrayList;
import java.util.List;

/**
 * The features as one list per row (an {@code outputCol}), built the same way on the GPU and on the
 * CPU: the numeric features ({@link FeatureNames#numeric}) in the model's order, each as a double
 * (a boolean as 1 or 0), a missing one (a null date's or timestamp's part) as NaN, as Spark ML's
 * {@code VectorAssembler} with {@code handleInvalid = "keep"} gives it; for floats, that double
 * rounded to the nearest float.
 */
final class FeatureLists {
  private FeatureLists() {}

  /**
   * A LIST column of {@code features}' columns at {@code at}, FLOAT32 or FLOAT64. The caller keeps
   * {@code features}; the list is new, and the caller's. Runs on the calling thread's stream.
   */
  static ColumnVector onGpu(List<ColumnVector> features, List<Integer> at, boolean floats) {
    List<ColumnVector> parts = new ArrayList<>();
    try {
      for (int i : at) {
        parts.add(element(features.get(i), floats));
      }
      return ColumnVector.makeList(parts.toArray(new ColumnView[0]));
    } finally {
      parts.forEach(ColumnVector::close);
    }
  }

  /** One feature as the list's element type, nulls as NaN. */
  private static ColumnVector element(ColumnVector feature, boolean floats) {
    try (ColumnVector d = feature.castTo(DType.FLOAT64);
        Scalar nan = Scalar.fromDouble(Double.NaN);
        ColumnVector noNulls = d.replaceNulls(nan)) {
      return noNulls.castTo(floats ? DType.FLOAT32 : DType.FLOAT64);
    }
  }

  /** The same list on the CPU, from one row's {@code features} values. */
  static List<Object> onCpu(List<Object> features, List<Integer> at, boolean floats) {
    List<Object> list = new ArrayList<>(at.size());
    for (int i : at) {
      double d = value(features.get(i));
      list.add(floats ? (Object) (float) d : (Object) d);
    }
    return list;
  }

  private static double value(Object o) {
    if (o == null) {
      return Double.NaN;
    }
    if (o instanceof Boolean b) {
      return b ? 1.0 : 0.0;
    }
    return ((Number) o).doubleValue();
  }
}
