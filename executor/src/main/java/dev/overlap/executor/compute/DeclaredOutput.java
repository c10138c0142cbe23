package dev.overlap.executor.compute;

import ai.rapids.cudf.DType;
import dev.overlap.executor.types.ColumnType;
import dev.overlap.executor.types.NestedTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/** The kernel's output against the schema it declared, for every output mode. */
public final class DeclaredOutput {
  private DeclaredOutput() {}

  /**
   * Checks a kernel's output column types against its declared schema.
   *
   * @throws IllegalArgumentException naming the column count, or the first column whose cuDF type
   *     differs from the schema's
   */
  public static void check(StructType schema, DType[] actual, String producer) {
    if (actual.length != schema.fields().length) {
      throw new IllegalArgumentException(
          producer
              + " returned "
              + actual.length
              + " columns, its declared output schema has "
              + schema.fields().length
              + ": "
              + schema.simpleString());
    }
    for (int c = 0; c < actual.length; c++) {
      DType expected = ColumnType.dtypeOf(schema.fields()[c].dataType());
      if (!expected.equals(actual[c])) {
        throw new IllegalArgumentException(
            producer
                + ": output column '"
                + schema.fields()[c].name()
                + "' is "
                + actual[c]
                + " on the GPU but declared "
                + schema.fields()[c].dataType().simpleString()
                + " (cuDF "
                + expected
                + ")");
      }
    }
  }

  /**
   * Checks a nested output column's children, at every level, against its declared type: what
   * {@link #check} cannot see in a top-level LIST or STRUCT.
   *
   * @throws IllegalArgumentException naming the column and the path to the first part that differs
   */
  public static void checkNested(StructField field, NestedTypes.Shape actual, String producer) {
    if (!ColumnType.of(field.dataType()).nested()) {
      return;
    }
    String why = NestedTypes.mismatch(field.dataType(), actual, field.name());
    if (why != null) {
      throw new IllegalArgumentException(
          producer
              + ": output column '"
              + field.name()
              + "' differs from its declared type: "
              + why);
    }
  }
}
