package dev.overlap.jobs;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.StructField;

/**
 * Compares two Parquet outputs of a job (its GPU run and its CPU run, say), in Spark, at any size:
 * the rows are matched on key columns that identify a row, doubles must agree within a relative
 * tolerance, every other value exactly. Prints the verdict; exits 1 on a difference.
 *
 * <p>Usage: {@code CompareOutputs <dirA> <dirB> <keyColumn,...> [relTolerance=1e-9]}; keys given as
 * {@code rank:<keyColumn,...>} match rows by their place in the keys' order instead of by equal
 * keys (see {@link #ranked}).
 */
public final class CompareOutputs {
  private static final String RANK = "__rank";

  /**
   * {@code d} with each row's place in the order of {@code keys}, as column {@link #RANK}: rows
   * whose keys are doubles that differ in the last bits between the outputs (a statistic computed
   * in another order, through the same increasing function) are then matched by their place.
   */
  private static Dataset<Row> ranked(SparkSession spark, Dataset<Row> d, List<String> keys) {
    Column[] order = keys.stream().map(k -> functions.col("`" + k + "`")).toArray(Column[]::new);
    JavaRDD<Row> rows =
        d.orderBy(order)
            .javaRDD()
            .zipWithIndex()
            .map(
                t -> {
                  Object[] v = new Object[t._1().length() + 1];
                  for (int i = 0; i < v.length - 1; i++) {
                    v[i] = t._1().get(i);
                  }
                  v[v.length - 1] = t._2();
                  return RowFactory.create(v);
                });
    return spark.createDataFrame(rows, d.schema().add(RANK, DataTypes.LongType, false));
  }

  public static void main(String[] args) {
    double tol = args.length > 3 ? Double.parseDouble(args[3]) : 1e-9;
    SparkSession spark = TestSessions.local("local[*]", "spark.sql.shuffle.partitions", "64");
    int code;
    try {
      Dataset<Row> a = spark.read().parquet(args[0]);
      Dataset<Row> b = spark.read().parquet(args[1]);
      // Counted once, from the files: a ranked side would be sorted again for each count.
      long countA = a.count();
      long countB = b.count();
      List<String> keys = List.of(args[2].replaceFirst("^rank:", "").split(","));
      if (args[2].startsWith("rank:")) {
        a = ranked(spark, a, keys);
        b = ranked(spark, b, keys);
        keys = List.of(RANK);
      }
      a.createOrReplaceTempView("a");
      b.createOrReplaceTempView("b");
      List<String> on = new ArrayList<>();
      for (String k : keys) {
        on.add("a.`" + k + "` <=> b.`" + k + "`");
      }
      List<String> checks = new ArrayList<>();
      List<String> names = new ArrayList<>();
      for (StructField f : a.schema().fields()) {
        String x = "a.`" + f.name() + "`";
        String y = "b.`" + f.name() + "`";
        String bad =
            f.dataType() instanceof DoubleType
                ? String.format(
                    Locale.ROOT,
                    "(%s is null) <> (%s is null) or abs(%s - %s) > %s * greatest(1d, abs(%s))",
                    x,
                    y,
                    x,
                    y,
                    tol,
                    x)
                : "not (" + x + " <=> " + y + ")";
        checks.add("sum(case when " + bad + " then 1 else 0 end)");
        names.add(f.name());
      }
      String sql =
          "select count(*), sum(case when a.`"
              + keys.get(0)
              + "` is null or b.`"
              + keys.get(0)
              + "` is null then 1 else 0 end), "
              + String.join(", ", checks)
              + " from a full outer join b on "
              + String.join(" and ", on);
      Row r = spark.sql(sql).first();
      long unmatched = r.getLong(1);
      long diffs = unmatched;
      StringBuilder detail = new StringBuilder();
      for (int i = 0; i < names.size(); i++) {
        long d = r.isNullAt(i + 2) ? 0 : r.getLong(i + 2);
        if (d > 0) {
          detail.append(' ').append(names.get(i)).append('=').append(d);
          diffs += d;
        }
      }
      System.out.printf(
          Locale.ROOT,
          "%s: %s vs %s: %d rows (a %d, b %d), %d unmatched, %d differing values%s%n",
          diffs == 0 && countA == countB ? "EQUAL" : "DIFFERENT",
          args[0],
          args[1],
          r.getLong(0),
          countA,
          countB,
          unmatched,
          diffs - unmatched,
          detail);
      code = diffs == 0 && countA == countB ? 0 : 1;
    } finally {
      spark.stop();
    }
    System.exit(code);
  }
}
