package dev.overlap.executor.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Random queries over {@link SqlCompilerCases}' table from a grammar of what the SQL compiler takes
 * (and a little it does not): filters of comparisons, {@code IN}, {@code BETWEEN}, null tests and
 * {@code <=>} joined by {@code AND}, {@code OR} and {@code NOT}; decimal arithmetic; counts, sums,
 * averages, minima and maxima grouped by none, one or two columns. The same seed gives the same
 * query.
 */
final class RandomQueries {
  private static final String[] DECIMALS = {"q", "e", "d", "t"};
  private static final String[] KEYS = {"rf", "ls", "sd", "i"};
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
    return switch (r.nextInt(9)) {
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
    return switch (r.nextInt(8)) {
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
