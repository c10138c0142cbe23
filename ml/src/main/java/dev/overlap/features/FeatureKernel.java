package dev.overlap.features;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import ai.rapids.cudf.UnaryOp;
import dev.overlap.executor.api.CpuKernel;
import dev.overlap.executor.api.GpuKernel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.StructType;

/**
 * The features of {@link FeaturePlan}, per batch:
 *
 * <ul>
 *   <li>numeric: {@code imputed} = the value as double, the column's fill (its mean, median or mode
 *       by imputeStrategy) where missing; {@code std} = (imputed − mean) / standard deviation (0
 *       when the deviation is 0), computed on values scaled by a power of two where the column's
 *       magnitudes need it ({@link FeatureScale}); {@code log1p} = ln(1 + imputed), for columns
 *       whose minimum is non-negative. Missing means null, and in a float or double column also
 *       NaN, +Infinity or -Infinity: such a value is treated exactly as a null (its {@code isnull}
 *       is true, its {@code imputed} the mean, its {@code std} 0), and the mean, deviation and
 *       minimum of the first pass leave it out. Every float or double column therefore has {@code
 *       isnull} and {@code imputed}, even one declared non-nullable;
 *   <li>timestamp (UTC): hour, day of week (1 = Sunday … 7 = Saturday, as Spark's {@code
 *       dayofweek}), month; timestamp_ntz: the same parts of its wall-clock time, as Spark's {@code
 *       hour}, {@code dayofweek} and {@code month} give them whatever the session's zone; date: day
 *       of week and month;
 *   <li>string: the index in the vocabulary of the N most frequent values (most frequent first,
 *       ties by value); any other value and null give N;
 *   <li>every nullable column: {@code isnull}, and {@code imputed}, the value with nulls replaced:
 *       by the mean for numbers (as double), the mean day or instant for dates and timestamps
 *       (rounded to a day or microsecond), the most frequent value for strings (ties by value). The
 *       other features of a null date or timestamp stay null.
 * </ul>
 */
final class FeatureKernel implements GpuKernel {
  private final FeaturePlan plan;

  FeatureKernel(FeaturePlan plan) {
    this.plan = plan;
  }

  @Override
  public StructType outputSchema(StructType input) {
    return plan.outputSchema();
  }

  @Override
  public Table apply(Table in) {
    FeatureLayout layout = plan.layout();
    List<ColumnVector> features = new ArrayList<>();
    List<ColumnVector> out = new ArrayList<>();
    try {
      for (int i = 0; i < plan.columns.size(); i++) {
        FeaturePlan.Column c = plan.columns.get(i);
        ColumnVector column = in.getColumn(layout.encodedAt[i]);
        // A float or double column with its NaN and infinities turned into nulls (a null resource
        // is not closed).
        try (ColumnVector finite = c.floating ? finiteOrNull(column) : null) {
          ColumnVector x = finite != null ? finite : column;
          List<String> wanted = plan.kindFeatures(c);
          if (c.kind == FeaturePlan.Kind.NUMERIC) {
            numeric(c, x, wanted, features);
          } else {
            for (String f : wanted) {
              features.add(kindFeature(c, x, f));
            }
          }
          if (c.nullable) {
            features.add(x.isNull());
            features.add(imputed(c, x));
          }
        }
      }
      if (layout.listName != null) {
        ColumnVector list = FeatureLists.onGpu(features, layout.listed, layout.floats);
        features.forEach(ColumnVector::close);
        features.clear();
        features.add(list);
      }
      if (layout.inputsFirst) {
        passed(in, layout, out);
      }
      out.addAll(features); // out owns them now
      features.clear();
      if (!layout.inputsFirst) {
        passed(in, layout, out);
      }
      // The table takes its own reference to each column; out's are closed below.
      return new Table(out.toArray(new ColumnVector[0]));
    } finally {
      features.forEach(ColumnVector::close);
      out.forEach(ColumnVector::close);
    }
  }

  /**
   * The columns passed through: the input's own, one more reference each, which {@code out} owns
   * (the input table keeps its own).
   */
  private static void passed(Table in, FeatureLayout layout, List<ColumnVector> out) {
    for (int at : layout.passedAt) {
      out.add(in.getColumn(at).incRefCount());
    }
  }

  /** A float or double column as FLOAT64, with NaN, +Infinity and -Infinity made null. */
  static ColumnVector finiteOrNull(ColumnVector x) {
    try (ColumnVector d = x.castTo(DType.FLOAT64);
        ColumnVector noNan = d.nansToNulls();
        ColumnVector magnitude = noNan.abs();
        Scalar infinity = Scalar.fromDouble(Double.POSITIVE_INFINITY);
        ColumnVector infinite = magnitude.equalTo(infinity);
        Scalar missing = Scalar.fromNull(DType.FLOAT64)) {
      // A null in infinite (a null or NaN value) selects noNan, null there too.
      return infinite.ifElse(missing, noNan);
    }
  }

  /**
   * A date's, timestamp's or string's feature {@code f}. cuDF's parts are UTC's: for NTZ micros,
   * the wall clock's.
   */
  private static ColumnVector kindFeature(FeaturePlan.Column c, ColumnVector x, String f) {
    switch (f) {
      case "hour":
        return toInt(x.hour());
      case "dow":
        return dayOfWeek(x);
      case "month":
        return toInt(x.month());
      case "idx":
        return index(c, x);
      default:
        throw new AssertionError(f);
    }
  }

  private static void numeric(
      FeaturePlan.Column c, ColumnVector x, List<String> wanted, List<ColumnVector> out) {
    try (ColumnVector d = x.castTo(DType.FLOAT64);
        Scalar fill = Scalar.fromDouble(c.fill);
        ColumnVector imputed = d.replaceNulls(fill);
        ColumnVector centered = centered(c, imputed)) {
      if (!wanted.contains("std")) {
        // no standardized column
      } else if (c.scaledStd > 0) {
        try (Scalar std = Scalar.fromDouble(c.scaledStd)) {
          out.add(centered.binaryOp(BinaryOp.DIV, std, DType.FLOAT64));
        }
      } else {
        try (Scalar zero = Scalar.fromDouble(0.0)) {
          out.add(centered.binaryOp(BinaryOp.MUL, zero, DType.FLOAT64));
        }
      }
      if (wanted.contains("log1p")) {
        try (Scalar one = Scalar.fromDouble(1.0);
            ColumnVector plus = imputed.binaryOp(BinaryOp.ADD, one, DType.FLOAT64)) {
          out.add(plus.unaryOp(UnaryOp.LOG));
        }
      }
    }
  }

  /**
   * {@code v · scale − mean · scale}, the steps of {@link FeaturePlan.Column#standardized}; a scale
   * of 1 changes no value, so its multiplications are left out.
   */
  private static ColumnVector centered(FeaturePlan.Column c, ColumnVector v) {
    if (c.scale == 1.0) {
      try (Scalar mean = Scalar.fromDouble(c.mean)) {
        return v.binaryOp(BinaryOp.SUB, mean, DType.FLOAT64);
      }
    }
    try (Scalar scale = Scalar.fromDouble(c.scale);
        Scalar mean = Scalar.fromDouble(c.mean * c.scale);
        ColumnVector scaled = v.binaryOp(BinaryOp.MUL, scale, DType.FLOAT64)) {
      return scaled.binaryOp(BinaryOp.SUB, mean, DType.FLOAT64);
    }
  }

  private static ColumnVector imputed(FeaturePlan.Column c, ColumnVector x) {
    switch (c.kind) {
      case NUMERIC:
        try (ColumnVector d = x.castTo(DType.FLOAT64);
            Scalar fill = Scalar.fromDouble(c.fill)) {
          return d.replaceNulls(fill);
        }
      case DATE:
        try (Scalar mean = Scalar.timestampDaysFromInt(Math.toIntExact(c.meanEpoch))) {
          return x.replaceNulls(mean);
        }
      case TIMESTAMP:
      case TIMESTAMP_NTZ:
        try (Scalar mean = Scalar.timestampFromLong(DType.TIMESTAMP_MICROSECONDS, c.meanEpoch)) {
          return x.replaceNulls(mean);
        }
      case STRING:
        try (Scalar mode = Scalar.fromString(c.mode)) {
          return x.replaceNulls(mode);
        }
      default:
        throw new AssertionError(c.kind);
    }
  }

  private static ColumnVector toInt(ColumnVector v) {
    try (v) {
      return v.castTo(DType.INT32);
    }
  }

  /** cuDF's weekDay is 1 = Monday … 7 = Sunday; Spark's dayofweek is 1 = Sunday … 7 = Saturday. */
  private static ColumnVector dayOfWeek(ColumnVector x) {
    try (ColumnVector iso = x.weekDay();
        ColumnVector iso32 = iso.castTo(DType.INT32);
        Scalar seven = Scalar.fromInt(7);
        Scalar one = Scalar.fromInt(1);
        ColumnVector mod = iso32.binaryOp(BinaryOp.MOD, seven, DType.INT32)) {
      return mod.binaryOp(BinaryOp.ADD, one, DType.INT32);
    }
  }

  private static ColumnVector index(FeaturePlan.Column c, ColumnVector x) {
    List<String> vocab = c.vocabulary;
    ColumnVector idx;
    try (Scalar n = Scalar.fromInt(vocab.size())) {
      idx = ColumnVector.fromScalar(n, (int) x.getRowCount());
    }
    // idx is owned here while not null; within an iteration prev owns the previous column.
    try {
      for (int i = vocab.size() - 1; i >= 0; i--) {
        try (Scalar value = Scalar.fromString(vocab.get(i));
            Scalar pos = Scalar.fromInt(i);
            ColumnVector eq = x.equalTo(value);
            ColumnVector prev = idx) {
          idx = null;
          idx = eq.ifElse(pos, prev); // a null comparison (null string) counts as false
        }
      }
    } catch (RuntimeException | Error e) {
      if (idx != null) {
        try {
          idx.close();
        } catch (RuntimeException | Error r) {
          e.addSuppressed(r);
        }
      }
      throw e;
    }
    return idx;
  }

  /** The same features on the CPU, row by row ({@link CpuFeatures}). */
  @Override
  public CpuKernel cpu() {
    FeaturePlan p = plan;
    return rows ->
        new Iterator<>() {
          private final List<List<String>> kinds = CpuFeatures.kindFeatures(p);

          @Override
          public boolean hasNext() {
            return rows.hasNext();
          }

          @Override
          public Row next() {
            return CpuFeatures.row(p, kinds, rows.next());
          }
        };
  }
}
