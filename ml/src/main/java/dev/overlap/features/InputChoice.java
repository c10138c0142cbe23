package dev.overlap.features;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Which input columns the encoder encodes: those {@code inputCols} names, checked; or, when it
 * names none, every column of a type it encodes but the label ({@code labelCol}) and {@code
 * excludeCols}. No column is left out for its name alone: an id is a number like any other unless
 * named in {@code excludeCols}.
 *
 * @param chosen the columns to encode, in input order (inputCols' order when named)
 * @param leftOut the columns of an encoded type left out, each with why ("label (labelCol)")
 * @param named whether inputCols named the columns
 */
record InputChoice(StructType chosen, List<String> leftOut, boolean named) {

  /** The choice over {@code schema}; refuses, naming the column, what it cannot choose. */
  static InputChoice of(StructType schema, String[] inputCols, String labelCol, String[] excluded) {
    Set<String> exclude = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    for (String e : excluded) {
      InputColumns.require(schema, e, "to leave out (excludeCols)");
      exclude.add(InputColumns.field(schema, e).name());
    }
    if (inputCols.length > 0) {
      StructType chosen = new StructType();
      for (String name : inputCols) {
        InputColumns.require(schema, name, "to encode");
        StructField f = InputColumns.field(schema, name);
        if (exclude.contains(f.name())) {
          throw new FeatureInputException(
              "column '" + name + "' is in both inputCols and excludeCols; leave it out of one");
        }
        if (FeatureKinds.of(f.dataType()) == null) {
          throw new FeatureInputException(
              "column '"
                  + name
                  + "' is "
                  + f.dataType().simpleString()
                  + ", a type the encoder does not encode; leave it out of inputCols");
        }
        chosen = chosen.add(f);
      }
      return new InputChoice(chosen, List.of(), true);
    }
    StructField label =
        labelCol == null || labelCol.isEmpty() ? null : InputColumns.field(schema, labelCol);
    StructType chosen = new StructType();
    List<String> leftOut = new ArrayList<>();
    for (StructField f : schema.fields()) {
      if (FeatureKinds.of(f.dataType()) == null) {
        continue; // passed through, and said so when transformed
      }
      if (f == label) {
        leftOut.add(f.name() + " (labelCol)");
      } else if (exclude.contains(f.name())) {
        leftOut.add(f.name() + " (excludeCols)");
      } else {
        chosen = chosen.add(f);
      }
    }
    return new InputChoice(chosen, List.copyOf(leftOut), false);
  }

  /** The chosen columns' names, in order. */
  String[] names() {
    return chosen.fieldNames();
  }

  /**
   * The refusal of a choice of no column when inputCols named none: the columns left out by name,
   * or else those of types it does not encode.
   */
  String noneChosen(StructType schema) {
    if (leftOut.isEmpty()) {
      return FeatureKinds.noneEncoded(schema);
    }
    return "no column of the input gets a feature: "
        + String.join(", ", leftOut)
        + (leftOut.size() == 1 ? " is" : " are")
        + " left out, and no other column is of a type the encoder encodes ("
        + FeatureKinds.ENCODED
        + "); name the columns to encode in inputCols";
  }

  /** The log line of an unnamed choice: which columns are encoded, which left out and why. */
  String said() {
    List<String> names = List.of(names());
    String shown =
        names.size() <= 20
            ? String.join(", ", names)
            : String.join(", ", names.subList(0, 20)) + " and " + (names.size() - 20) + " more";
    return "inputCols not set: encoding "
        + names.size()
        + (names.size() == 1 ? " column: " : " columns: ")
        + shown
        + (leftOut.isEmpty() ? "" : "; left out: " + String.join(", ", leftOut));
  }
}
