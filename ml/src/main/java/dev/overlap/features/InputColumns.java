package dev.overlap.features;

import static org.apache.spark.sql.functions.col;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/** Input column names: quoted for Spark, selected, and checked that Spark can tell them apart. */
final class InputColumns {
  private InputColumns() {}

  /**
   * Refuses input columns Spark could not tell apart: two with one name, or, unless {@code
   * spark.sql.caseSensitive} is set, two whose names differ only in case.
   */
  static void check(Dataset<Row> input) {
    boolean caseSensitive =
        Boolean.parseBoolean(input.sparkSession().conf().get("spark.sql.caseSensitive", "false"));
    Map<String, String> seen =
        caseSensitive ? new HashMap<>() : new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    for (String name : input.columns()) {
      String earlier = seen.putIfAbsent(name, name);
      if (earlier == null) {
        continue;
      }
      if (earlier.equals(name)) {
        throw new FeatureInputException(
            "the input has two columns named '" + name + "'; rename one");
      }
      throw new FeatureInputException(
          "input columns '"
              + earlier
              + "' and '"
              + name
              + "' differ only in case, and Spark resolves names ignoring case: rename one, or"
              + " pass --conf spark.sql.caseSensitive=true");
    }
  }

  /** A column name as a SQL identifier, so that dots, spaces and backticks in it are literal. */
  static String quote(String name) {
    return "`" + name.replace("`", "``") + "`";
  }

  static Column[] cols(String[] names) {
    Column[] out = new Column[names.length];
    for (int i = 0; i < names.length; i++) {
      out[i] = col(quote(names[i]));
    }
    return out;
  }

  /** The field named {@code name}: exactly, or else ignoring case, as Spark resolves by default. */
  static StructField field(StructType schema, String name) {
    for (StructField f : schema.fields()) {
      if (f.name().equals(name)) {
        return f;
      }
    }
    for (StructField f : schema.fields()) {
      if (f.name().equalsIgnoreCase(name)) {
        return f;
      }
    }
    return null;
  }

  /** Refuses a column the input lacks, naming it and the columns it has. */
  static void require(StructType schema, String name, String what) {
    if (field(schema, name) == null) {
      throw new FeatureInputException(
          "the input has no column '"
              + name
              + "' "
              + what
              + "; its columns are "
              + String.join(", ", schema.fieldNames()));
    }
  }

  /** The folder of the dataset's files (one, else the first and a count), or "a dataset". */
  static String source(Dataset<Row> data) {
    String[] files = data.inputFiles();
    if (files.length == 0) {
      return "a dataset not read from files";
    }
    java.util.Set<String> folders = new java.util.TreeSet<>();
    for (String f : files) {
      folders.add(new org.apache.hadoop.fs.Path(f).getParent().toString());
    }
    return folders.size() == 1
        ? folders.iterator().next()
        : folders.iterator().next() + " and " + (folders.size() - 1) + " more folders";
  }
}
