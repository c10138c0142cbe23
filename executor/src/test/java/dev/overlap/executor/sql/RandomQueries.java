package dev.overlap.executor.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Random queries over {@link SqlCompilerCases}' table from a grammar of what the SQL compiler takes
 * (and a little it does not): filters of comparisons, {@code IN}, {@code BETWEEN}, null tests,
 * {@code <=>}, {@code LIKE} and string matches, date parts joined by {@code AND}, {@code OR} and
 * {@code NOT}; decimal arithmetic; {@code CASE}, {@code IF}, {@code COALESCE}, negation and {@code
 * abs}; counts, sums, averages, minima and maxima grouped by none, one or two columns or
 * expressions. The same seed gives the same query.
 */
final class RandomQueries {
  private static final String[] DECIMALS = {"q", "e", "d", "t"};
  private static final String[] KEYS = {"rf", "ls", "sd", "i", "year(sd)", "s", "bt"};
  private final Random r;

  RandomQueries(long seed) {
    this.r = new Random(seed);
  }

  String next() {
    List<String> keys = new ArrayList<>();
    int k = r.nextInt(3);
    for (int i = 0; i < k; i++) {
      String key = pick(KEYS);
      if (!keys.contains(key)) {
        keys.add(key);
      }
    }
    List<String> select = new ArrayList<>(keys);
    int n = 1 + r.nextInt(4);
    for (int i = 0; i < n; i++) {
      select.add(aggregate());
    }
    StringBuilder sql = new StringBuilder("SELECT ").append(String.join(", ", select));
    sql.append(" FROM t");
    if (r.nextInt(4) > 0) {
      sql.append(" WHERE ").append(predicate(2));
    }
    if (!keys.isEmpty()) {
      sql.append(" GROUP BY ").append(String.join(", ", keys));
    }
    return sql.toString();
  }

  private String aggregate() {
    return switch (r.nextInt(16)) {
      case 9 -> "sum(CASE WHEN " + predicate(1) + " THEN " + decimal(1) + " ELSE 0 END)";
      case 10 -> "sum(IF(" + predicate(1) + ", " + decimal(1) + ", -" + pick(DECIMALS) + "))";
      case 11 -> "sum(coalesce(d, " + pick("0", "q", "0.01") + "))";
      case 12 ->
          pick("min", "max")
              + "("
              + pick(
                  "year(sd)",
                  "month(od)",
                  "dayofmonth(sd)",
                  "dayofweek(od)",
                  "date_add(sd, i)",
                  "date_sub(od, bt)",
                  "abs(bt)",
                  "-bt",
                  "-l",
                  "abs(l)",
                  "-q",
                  "abs(e - 30)",
                  "s",
                  "coalesce(rf, ls)")
              + ")";
      case 13 -> "sum(" + pick("year(od)", "dayofweek(sd)", "abs(bt)", "-i", "bt") + ")";
      case 14 -> "count(" + pick("f", "s", "od", "CASE WHEN s LIKE 'ab%' THEN 1 END") + ")";
      case 15 -> pick("avg(bt)", "min(f)", "max(f)", "sum(f)"); // f's: left to Spark
      case 0 -> "count(*)";
      case 1 -> "count(" + pick("x", "rf", "d", "sd") + ")";
      case 2, 3 -> "sum(" + decimal(2) + ")";
      case 4 -> "avg(" + decimal(1) + ")";
      case 5 -> pick("sum(i)", "avg(d)", "avg(i)"); // avg(i): left, Spark sums it in double
      case 6 -> pick("min", "max") + "(" + pick("rf", "ls", "sd", "e", "i", "id") + ")";
      case 7 -> pick("sum", "avg") + "(x)"; // left to Spark: the order of adding doubles
      default -> "sum(" + decimal(1) + " * " + pick("2", "0.5", "-1") + ")";
    };
  }

  /** A decimal expression of up to {@code depth} operators. */
  private String decimal(int depth) {
    if (depth == 0 || r.nextInt(3) == 0) {
      return pick(DECIMALS);
    }
    String op = pick("+", "-", "*");
    String right =
        r.nextBoolean() ? decimal(depth - 1) : "(1 " + pick("+", "-") + " " + pick(DECIMALS) + ")";
    return "(" + decimal(depth - 1) + " " + op + " " + right + ")";
  }

  private String predicate(int depth) {
    if (depth > 0 && r.nextInt(3) == 0) {
      return "("
          + predicate(depth - 1)
          + " "
          + pick("AND", "OR")
          + " "
          + predicate(depth - 1)
          + ")";
    }
    if (depth > 0 && r.nextInt(6) == 0) {
      return "NOT " + predicate(depth - 1);
    }
    return switch (r.nextInt(16)) {
      case 8 -> "s LIKE '" + pick("ab%", "%rld", "%o w%", "line%", "%", "a_1%") + "'";
      case 9 ->
          pick("startswith(s, 'ab1')", "endswith(s, 'z')", "contains(s, 'eak')", "contains(s, '')");
      case 10 -> "year(" + pick("sd", "od") + ") " + cmp() + " " + pick("1995", "1500", "2200");
      case 11 -> "dayofweek(od) = " + (1 + r.nextInt(7));
      case 12 -> "abs(bt) " + cmp() + " " + r.nextInt(130);
      case 13 -> "coalesce(d, 0.0) " + cmp() + " 0.05";
      case 14 ->
          pick(
              "f " + cmp() + " " + pick("0.0", "CAST('NaN' AS DOUBLE)", "-1.5", "x", "-f"),
              "f IN (0.0, -0.0, CAST('NaN' AS DOUBLE))",
              "x / i > 2.5",
              "f / i " + cmp() + " 0.5",
              "-l < 0",
              "-bt > 3");
      case 15 ->
          pick(
              "date_add(sd, bt) < date '1995-01-01'",
              "CASE WHEN rf = 'A' THEN q > 10 ELSE i < 500 END");
      case 0 -> pick(DECIMALS) + " " + cmp() + " " + (r.nextInt(5000) / 100.0);
      case 1 -> "i " + cmp() + " " + r.nextInt(1000);
      case 2 -> "rf " + pick("=", "<>", "<=>", "<", ">=") + " '" + pick("A", "B", "C", "") + "'";
      case 3 ->
          "sd " + cmp() + " date '" + (1992 + r.nextInt(7)) + "-0" + (1 + r.nextInt(9)) + "-15'";
      case 4 -> pick("rf", "d", "sd", "x") + pick(" IS NULL", " IS NOT NULL");
      case 5 -> "rf IN ('A', " + pick("'B'", "NULL", "'Z'") + ")";
      case 6 -> "d BETWEEN 0.0" + r.nextInt(5) + " AND 0.0" + (5 + r.nextInt(5));
      default -> "ls = 'F'";
    };
  }

  private String cmp() {
    return pick("=", "<", "<=", ">", ">=", "<>", "<=>");
  }

  private String pick(String... choices) {
    return choices[r.nextInt(choices.length)];
  }
}
