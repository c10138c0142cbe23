package dev.overlap.features;

/**
 * Partial moments combined by Chan et al.'s pairwise formulas; one value at a time ({@link #add}),
 * that is Welford's update.
 */
final class Moments {
  long n;
  double mean;
  double m2;
  double min = Double.POSITIVE_INFINITY;
  double max = Double.NEGATIVE_INFINITY;
  long nonFinite;

  /** One value; NaN and infinities are counted apart and left out. */
  void add(double x) {
    if (Double.isFinite(x)) {
      merge(1, x, 0.0, x, x);
    } else {
      nonFinite++;
    }
  }

  void merge(long nb, double meanB, double m2B, double minB, double maxB) {
    if (n == 0) {
      n = nb;
      mean = meanB;
      m2 = m2B;
      min = minB;
      max = maxB;
      return;
    }
    long total = n + nb;
    double delta = meanB - mean;
    mean += delta * nb / total;
    m2 += m2B + delta * delta * ((double) n * nb / total);
    n = total;
    min = Math.min(min, minB);
    max = Math.max(max, maxB);
  }
}
