package dev.overlap.features;

import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;

/**
 * {@link FirstPassKernel} and {@link VocabCountKernel} on the CPU: the same partial aggregates,
 * over a whole partition as one batch.
 */
final class CpuFirstPass {
  private CpuFirstPass() {}

  /** One column's totals over a partition, those of its kind. */
  private static final class Totals {
    long nulls;
    final Moments moments = new Moments();
    long present;
    long hi;
    long lo;
    final Map<String, Long> counts = new HashMap<>();
  }

  /** The rows of {@link FirstPassKernel#PARTIALS} for one partition. */
  static Iterator<Row> partials(FeaturePlan plan, int top, Iterator<Row> rows) {
    int width = plan.columns.size();
    Totals[] totals = new Totals[width];
    Arrays.setAll(totals, i -> new Totals());
    long seen = 0;
    while (rows.hasNext()) {
      Row r = rows.next();
      seen++;
      for (int i = 0; i < width; i++) {
        Totals t = totals[i];
        if (r.isNullAt(i)) {
          t.nulls++;
          continue;
        }
        FeaturePlan.Column c = plan.columns.get(i);
        Object v = r.get(i);
        switch (c.kind) {
          case NUMERIC:
            double d =
                v instanceof java.math.BigDecimal b ? b.doubleValue() : ((Number) v).doubleValue();
            t.moments.add(d);
            break;
          case DATE:
          case TIMESTAMP:
          case TIMESTAMP_NTZ:
            long e = epoch(c.kind, v);
            t.present++;
            t.hi += e >> 32;
            t.lo += e & 0xFFFFFFFFL;
            break;
          case STRING:
            t.counts.merge((String) v, 1L, Long::sum);
            break;
          default:
            throw new AssertionError(c.kind);
        }
      }
    }
    List<Row> out = new ArrayList<>();
    out.add(row(-1, null, seen, null, null, null, null, null, null, null, null));
    for (int i = 0; i < width; i++) {
      FeaturePlan.Column c = plan.columns.get(i);
      Totals t = totals[i];
      Long n = t.nulls;
      switch (c.kind) {
        case NUMERIC:
          Moments m = t.moments;
          boolean any = m.n > 0;
          out.add(
              row(
                  i,
                  null,
                  m.n,
                  any ? m.mean : null,
                  any ? m.m2 : null,
                  any ? m.min : null,
                  any ? m.max : null,
                  m.nonFinite,
                  null,
                  null,
                  n));
          break;
        case DATE:
        case TIMESTAMP:
        case TIMESTAMP_NTZ:
          out.add(row(i, null, t.present, null, null, null, null, null, t.hi, t.lo, n));
          break;
        case STRING:
          topValues(i, t.counts, top, n, out);
          break;
        default:
          throw new AssertionError(c.kind);
      }
    }
    return out.iterator();
  }

  /** The {@code top} most frequent values (ties by value) and the bound row, as on the GPU. */
  private static void topValues(
      int i, Map<String, Long> counts, int top, Long nulls, List<Row> out) {
    List<Map.Entry<String, Long>> sorted = new ArrayList<>(counts.entrySet());
    sorted.sort(FirstPass.BY_COUNT);
    long bound = sorted.size() > top ? sorted.get(top - 1).getValue() : 0;
    out.add(row(i, null, bound, null, null, null, null, null, null, null, nulls));
    for (Map.Entry<String, Long> e : sorted.subList(0, Math.min(top, sorted.size()))) {
      out.add(row(i, e.getKey(), e.getValue(), null, null, null, null, null, null, null, null));
    }
  }

  /**
   * {@link VocabCountKernel} on one partition: how often each candidate occurs; input column {@code
   * j} holds the values of {@code wanted.get(j)}.
   */
  static Iterator<Row> counts(List<VocabCountKernel.Candidates> wanted, Iterator<Row> rows) {
    List<Set<String>> values = new ArrayList<>();
    List<Map<String, Long>> counts = new ArrayList<>();
    for (VocabCountKernel.Candidates c : wanted) {
      values.add(new HashSet<>(c.values()));
      counts.add(new HashMap<>());
    }
    while (rows.hasNext()) {
      Row r = rows.next();
      for (int j = 0; j < wanted.size(); j++) {
        String v = r.isNullAt(j) ? null : r.getString(j);
        if (v != null && values.get(j).contains(v)) {
          counts.get(j).merge(v, 1L, Long::sum);
        }
      }
    }
    List<Row> out = new ArrayList<>();
    for (int j = 0; j < wanted.size(); j++) {
      for (Map.Entry<String, Long> e : counts.get(j).entrySet()) {
        out.add(RowFactory.create(wanted.get(j).col(), e.getKey(), e.getValue()));
      }
    }
    return out.iterator();
  }

  /**
   * Days (a date) or microseconds (a timestamp) since 1970-01-01 in the proleptic Gregorian
   * calendar, as Spark holds them and as the GPU's integers are.
   */
  static long epoch(FeaturePlan.Kind kind, Object v) {
    switch (kind) {
      case DATE:
        return v instanceof LocalDate l
            ? l.toEpochDay()
            : DateTimeUtils.fromJavaDate((java.sql.Date) v);
      case TIMESTAMP:
        // A row's Timestamp holds the hybrid calendar's fields; Spark's conversion undoes that,
        // where Timestamp.toInstant would be days off before 1582-10-15.
        return v instanceof Instant i
            ? DateTimeUtils.instantToMicros(i)
            : DateTimeUtils.fromJavaTimestamp((java.sql.Timestamp) v);
      case TIMESTAMP_NTZ:
        return DateTimeUtils.localDateTimeToMicros((LocalDateTime) v);
      default:
        throw new AssertionError(kind);
    }
  }

  private static Row row(
      int col,
      String value,
      long n,
      Double mean,
      Double m2,
      Double min,
      Double max,
      Long nonFinite,
      Long hi,
      Long lo,
      Long nulls) {
    return RowFactory.create(col, value, n, mean, m2, min, max, nonFinite, hi, lo, nulls);
  }
}
