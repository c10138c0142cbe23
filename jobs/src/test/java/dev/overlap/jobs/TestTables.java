package dev.overlap.jobs;

import dev.overlap.jobs.tpch.TpchTables;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/** Small real inputs for the end-to-end tests, written with Spark in the test's own JVM. */
public final class TestTables {
  private TestTables() {}

  public static SparkSession session() {
    return TestSessions.local("local[2]");
  }

  /** TPC-H lineitem at scale factor 0.002 (about 12,000 rows) as one Parquet file under dir. */
  public static Dataset<Row> lineitem(SparkSession spark, Path dir) {
    List<Row> rows = new ArrayList<>();
    for (Iterator<Row> it = TpchTables.lineItems(0.002, 1, 1, null); it.hasNext(); ) {
      rows.add(it.next());
    }
    Dataset<Row> li = spark.createDataFrame(rows, TpchTables.LINEITEM).coalesce(1);
    li.write().parquet(dir.toString());
    return li;
  }
}
