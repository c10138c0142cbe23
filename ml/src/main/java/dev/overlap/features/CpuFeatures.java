package dev.overlap.features;

import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;

/**
 * {@link FeatureKernel}'s features on the CPU, one row at a time, with the values the GPU path
 * gives: NaN and infinities are missing like nulls, timestamps are split in UTC (timestamp_ntz by
 * its own wall clock) in the proleptic Gregorian calendar, as Spark 3 and later count days, dates
 * and timestamps come back as the types Spark's rows hold.
 */
final class CpuFeatures {
  private CpuFeatures() {}

  /** {@link FeaturePlan#kindFeatures} of each column, once for many rows. */
  static List<List<String>> kindFeatures(FeaturePlan plan) {
    List<List<String>> all = new ArrayList<>();
    plan.columns.forEach(c -> all.add(List.copyOf(plan.kindFeatures(c))));
    return all;
  }

  /**
   * The features of one input row, in {@link FeaturePlan#outputSchema}'s order; {@code
   * kindFeatures} are the plan's ({@link #kindFeatures}).
   */
  static Row row(FeaturePlan plan, List<List<String>> kindFeatures, Row r) {
    FeatureLayout layout = plan.layout();
    List<Object> v = new ArrayList<>();
    for (int i = 0; i < plan.columns.size(); i++) {
      FeaturePlan.Column c = plan.columns.get(i);
      int at = layout.encodedAt[i];
      Object value = r.isNullAt(at) ? null : r.get(at);
      if (c.floating && value != null && !Double.isFinite(((Number) value).doubleValue())) {
        value = null; // NaN and infinities are missing, as on the GPU
      }
      boolean isNull = value == null;
      for (String f : kindFeatures.get(i)) {
        v.add(isNull && c.kind != FeaturePlan.Kind.NUMERIC ? nullPart(f, c) : feature(c, f, value));
      }
      if (c.nullable) {
        v.add(isNull);
        v.add(isNull ? imputedValue(c) : cpuValue(c, value));
      }
    }
    if (layout.listName != null) {
      v = List.of(FeatureLists.onCpu(v, layout.listed, layout.floats));
    }
    List<Object> passed = new ArrayList<>();
    for (int at : layout.passedAt) {
      passed.add(r.get(at)); // a column passed through, unchanged
    }
    List<Object> all = new ArrayList<>(layout.inputsFirst ? passed : v);
    all.addAll(layout.inputsFirst ? v : passed);
    return RowFactory.create(all.toArray());
  }

  /** A null's feature {@code f}: a date's or timestamp's parts stay null; a string gets N. */
  private static Object nullPart(String f, FeaturePlan.Column c) {
    return f.equals("idx") ? c.vocabulary.size() : null;
  }

  /** Feature {@code f} of a value, present unless a number's (imputed by the mean). */
  private static Object feature(FeaturePlan.Column c, String f, Object value) {
    switch (c.kind) {
      case NUMERIC:
        {
          double imputed = value == null ? c.fill : ((Number) toNumber(value)).doubleValue();
          return f.equals("std") ? c.standardized(imputed) : Math.log(imputed + 1.0);
        }
      case TIMESTAMP:
      case TIMESTAMP_NTZ:
        {
          LocalDateTime t = wallClock(CpuFirstPass.epoch(c.kind, value));
          return f.equals("hour")
              ? t.getHour()
              : f.equals("dow") ? t.getDayOfWeek().getValue() % 7 + 1 : t.getMonthValue();
        }
      case DATE:
        {
          LocalDate d = LocalDate.ofEpochDay(CpuFirstPass.epoch(c.kind, value));
          return f.equals("dow") ? d.getDayOfWeek().getValue() % 7 + 1 : d.getMonthValue();
        }
      case STRING:
        {
          int at = c.vocabulary.indexOf((String) value);
          return at < 0 ? c.vocabulary.size() : at;
        }
      default:
        throw new AssertionError(c.kind);
    }
  }

  /** A null's imputed value, as the CPU path's rows hold it. */
  private static Object imputedValue(FeaturePlan.Column c) {
    switch (c.kind) {
      case NUMERIC:
        return c.fill;
      case DATE:
        return DateTimeUtils.toJavaDate(Math.toIntExact(c.meanEpoch));
      case TIMESTAMP:
        // Spark's own conversion: a row's Timestamp holds the hybrid calendar's fields.
        return DateTimeUtils.toJavaTimestamp(c.meanEpoch);
      case TIMESTAMP_NTZ:
        return wallClock(c.meanEpoch);
      case STRING:
        return c.mode;
      default:
        throw new AssertionError(c.kind);
    }
  }

  /** A present value in the imputed column's type. */
  private static Object cpuValue(FeaturePlan.Column c, Object o) {
    return c.kind == FeaturePlan.Kind.NUMERIC ? ((Number) toNumber(o)).doubleValue() : o;
  }

  private static Object toNumber(Object o) {
    return o instanceof java.math.BigDecimal b ? b.doubleValue() : o;
  }

  /**
   * The wall-clock time {@code micros} microseconds after 1970-01-01 00:00 in the proleptic
   * Gregorian calendar, as Spark's {@code hour}, {@code dayofweek} and {@code month} read it: a
   * zoned timestamp's in UTC, an NTZ one's its own.
   */
  private static LocalDateTime wallClock(long micros) {
    return LocalDateTime.ofEpochSecond(
        Math.floorDiv(micros, 1_000_000L),
        (int) Math.floorMod(micros, 1_000_000L) * 1000,
        ZoneOffset.UTC);
  }
}
