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

  /** The features of one input row, in {@link FeaturePlan#outputSchema}'s order. */
  static Row row(FeaturePlan plan, Row r) {
    List<Object> v = new ArrayList<>();
    for (int i = 0; i < plan.columns.size(); i++) {
      FeaturePlan.Column c = plan.columns.get(i);
      Object value = r.isNullAt(i) ? null : r.get(i);
      if (c.floating && value != null && !Double.isFinite(((Number) value).doubleValue())) {
        value = null; // NaN and infinities are missing, as on the GPU
      }
      boolean isNull = value == null;
      switch (c.kind) {
        case NUMERIC:
          {
            double imputed = isNull ? c.mean : ((Number) toNumber(value)).doubleValue();
            v.add(c.standardized(imputed));
            if (c.nonNegative) {
              v.add(Math.log(imputed + 1.0));
            }
            break;
          }
        case TIMESTAMP:
        case TIMESTAMP_NTZ:
          if (isNull) {
            v.add(null);
            v.add(null);
            v.add(null);
          } else {
            LocalDateTime t = wallClock(CpuFirstPass.epoch(c.kind, value));
            v.add(t.getHour());
            v.add(t.getDayOfWeek().getValue() % 7 + 1);
            v.add(t.getMonthValue());
          }
          break;
        case DATE:
          if (isNull) {
            v.add(null);
            v.add(null);
          } else {
            LocalDate d = LocalDate.ofEpochDay(CpuFirstPass.epoch(c.kind, value));
            v.add(d.getDayOfWeek().getValue() % 7 + 1);
            v.add(d.getMonthValue());
          }
          break;
        case STRING:
          {
            int at = isNull ? -1 : c.vocabulary.indexOf((String) value);
            v.add(at < 0 ? c.vocabulary.size() : at);
            break;
          }
        default:
          throw new AssertionError(c.kind);
      }
      if (c.nullable) {
        v.add(isNull);
        v.add(isNull ? imputedValue(c) : cpuValue(c, value));
      }
    }
    if (plan.rowId != null) {
      v.add(r.get(plan.columns.size()));
    }
    return RowFactory.create(v.toArray());
  }

  /** A null's imputed value, as the CPU path's rows hold it. */
  private static Object imputedValue(FeaturePlan.Column c) {
    switch (c.kind) {
      case NUMERIC:
        return c.mean;
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
