package dev.overlap.jobs.cli;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.spark.sql.execution.datasources.parquet.ParquetToSparkSchemaConverter;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructField;

/**
 * What the footers of an input's Parquet files say about their columns, read before Spark starts:
 * which column has different types in different files, and which columns only some files have. Only
 * footers are read, of at most {@value #MAX_FILES} files (100 on a remote store); a file that is no
 * Parquet is left to Spark, whose failure names it.
 */
public final class InputFooters {
  static final int MAX_FILES = 1000;

  /** Per column, in the order first seen: its type (as Spark names it) and the files with it. */
  private final Map<String, Map<String, List<String>>> columns = new LinkedHashMap<>();

  private final List<String> files = new ArrayList<>();

  static final InputFooters NONE = new InputFooters();

  private InputFooters() {}

  /** Reads the footers of the files Spark reads for {@code files}, named relative to the input. */
  static InputFooters read(Configuration conf, Map<String, FileStatus> files) {
    InputFooters f = new InputFooters();
    ParquetToSparkSchemaConverter converter = new ParquetToSparkSchemaConverter(new SQLConf());
    for (Map.Entry<String, FileStatus> e : files.entrySet()) {
      org.apache.parquet.schema.MessageType schema;
      try (ParquetFileReader r =
          ParquetFileReader.open(HadoopInputFile.fromStatus(e.getValue(), conf))) {
        schema = r.getFooter().getFileMetaData().getSchema();
      } catch (IOException | RuntimeException notParquet) {
        continue;
      }
      f.files.add(e.getKey());
      for (StructField field : converter.convert(schema).fields()) {
        f.columns
            .computeIfAbsent(field.name(), k -> new TreeMap<>())
            .computeIfAbsent(field.dataType().simpleString(), k -> new ArrayList<>())
            .add(e.getKey());
      }
    }
    return f;
  }

  /** The first column whose type differs between files, as the line to show; empty if none. */
  Optional<String> disagreement() {
    List<String> named = new ArrayList<>();
    String first = null;
    for (Map.Entry<String, Map<String, List<String>>> c : columns.entrySet()) {
      if (c.getValue().size() < 2) {
        continue;
      }
      named.add(c.getKey());
      if (first == null) {
        List<String> types = new ArrayList<>();
        c.getValue().forEach((type, in) -> types.add(type + " in " + some(in)));
        first = String.join(", ", types);
      }
    }
    if (first == null) {
      return Optional.empty();
    }
    return Optional.of(
        "the input's files disagree on "
            + (named.size() == 1
                ? "column '" + named.get(0) + "': "
                : named.size() + " columns (" + quoted(named) + "); '" + named.get(0) + "': ")
            + first
            + "; give each column one type in every file, or read the files apart");
  }

  /** One warning naming the columns only some files have; empty when every file has them all. */
  public Optional<String> partialColumns() {
    List<String> named = new ArrayList<>();
    String example = null;
    for (Map.Entry<String, Map<String, List<String>>> c : columns.entrySet()) {
      List<String> in = new ArrayList<>();
      c.getValue().values().forEach(in::addAll);
      if (in.size() == files.size()) {
        continue;
      }
      named.add(c.getKey());
      if (example == null) {
        List<String> without = new ArrayList<>(files);
        without.removeAll(in);
        example = "'" + c.getKey() + "' is in " + some(in) + " but not in " + some(without);
      }
    }
    if (named.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        (named.size() == 1 ? "column " : "columns " + quoted(named) + " are in only some files; ")
            + example
            + ": Spark takes the columns of one file, so "
            + (named.size() == 1 ? "it" : "they")
            + " may be left out; pass --conf spark.sql.parquet.mergeSchema=true to keep "
            + (named.size() == 1 ? "it" : "them"));
  }

  private static String quoted(List<String> names) {
    List<String> q = new ArrayList<>();
    for (String n : names.subList(0, Math.min(5, names.size()))) {
      q.add("'" + n + "'");
    }
    return String.join(", ", q) + (names.size() > 5 ? " and " + (names.size() - 5) + " more" : "");
  }

  private static String some(List<String> files) {
    String shown = String.join(", ", files.subList(0, Math.min(3, files.size())));
    return files.size() > 3 ? shown + " and " + (files.size() - 3) + " more files" : shown;
  }
}
