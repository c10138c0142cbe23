package dev.overlap.executor.sql;

import org.apache.spark.sql.SparkSession;

/**
 * The SQL compiler cases' table ({@link SqlCompilerCases}): 20,000 rows in 4 files with TPC-H's
 * money columns (decimals, some null), keys, dates and a double; NaN, both zeros, an infinity and
 * nulls in {@code f}; strings empty, long, with a line break and beyond ASCII in {@code s}; dates
 * before 1582 and after 2100 in {@code od}; integers at their minimum in {@code bt} and {@code l};
 * decimals near 38 digits in {@code b} and {@code h}.
 */
final class CompilerTable {
  private CompilerTable() {}

  static void write(SparkSession spark, String path) {
    spark
        .sql(
            "SELECT id,"
                + " CAST(id % 50 AS DECIMAL(12,2)) AS q,"
                + " CAST(id * 1.25 AS DECIMAL(12,2)) AS e,"
                + " IF(id % 7 = 0, NULL, CAST((id % 10) / 100.0 AS DECIMAL(12,2))) AS d,"
                + " CAST((id % 8) / 100.0 AS DECIMAL(12,2)) AS t,"
                + " IF(id % 11 = 0, NULL, CHAR(65 + id % 3)) AS rf,"
                + " CHAR(70 + id % 2) AS ls,"
                + " IF(id % 13 = 0, NULL, DATE_ADD(DATE '1992-01-01', CAST(id % 2500 AS INT))) AS sd,"
                + " CAST(id % 1000 AS INT) AS i,"
                + " IF(id % 5 = 0, NULL, id * 0.5D) AS x,"
                + " CAST(id AS DECIMAL(20,0)) * CAST(1000000000000000 AS DECIMAL(20,0)) AS b,"
                + " CAST(id AS DECIMAL(38,0)) * CAST(1e33 AS DECIMAL(38,0)) AS h,"
                // NaN, both zeros, an infinity and nulls; strings empty, long, with a line break
                // and beyond ASCII; dates before 1582 and after 2100; integers at their minimum.
                + " CASE id % 9 WHEN 0 THEN CAST('NaN' AS DOUBLE) WHEN 1 THEN -0.0D WHEN 2 THEN 0.0D"
                + "   WHEN 3 THEN CAST('Infinity' AS DOUBLE) WHEN 4 THEN NULL"
                + "   ELSE (id % 100) - 50.5D END AS f,"
                + " CASE id % 6 WHEN 0 THEN '' WHEN 1 THEN NULL"
                + "   WHEN 2 THEN CONCAT('ab', CAST(id % 17 AS STRING)) WHEN 3 THEN 'h\u00e9llo w\u00f6rld'"
                + "   WHEN 4 THEN REPEAT('xyz', 40) ELSE CONCAT('line\nbreak', CAST(id % 3 AS STRING))"
                + "   END AS s,"
                + " DATE_ADD(IF(id % 2 = 0, DATE '1500-02-27', DATE '2199-12-30'),"
                + "   CAST(id % 400 AS INT)) AS od,"
                + " CAST(IF(id % 97 = 0, -128, id % 100 - 50) AS TINYINT) AS bt,"
                + " IF(id % 101 = 0, -9223372036854775808L, id * 1000003) AS l"
                + " FROM range(0, 20000, 1, 4)")
        .write()
        .parquet(path);
  }
}
