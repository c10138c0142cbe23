package dev.overlap.executor.types;

import ai.rapids.cudf.ColumnView;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostColumnVector;
import ai.rapids.cudf.HostColumnVectorCore;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * How Spark's nested types and {@code binary} are laid out in cuDF, as the RAPIDS Accelerator lays
 * them out:
 *
 * <ul>
 *   <li>{@code binary}: a LIST of UINT8, one list of bytes per row;
 *   <li>{@code array<T>}: a LIST whose child is {@code T}'s column;
 *   <li>{@code struct<a, b, ...>}: a STRUCT with one child per field, in order;
 *   <li>{@code map<K, V>}: a LIST of STRUCT{@code <key K, value V>}, one list of entries per row.
 * </ul>
 *
 * <p>Nulls live at every level: a null list is a null row of the LIST, an empty list has equal
 * offsets, a list holding a null has a null in its child. Nested to any depth, over any type {@link
 * ColumnType} takes.
 */
public final class NestedTypes {
  private NestedTypes() {}

  /** Whether {@code t} is a nested type or binary whose every part the GPU takes. */
  static boolean takes(DataType t) {
    if (t instanceof BinaryType) {
      return true;
    }
    if (t instanceof ArrayType a) {
      return ColumnType.of(a.elementType()) != null;
    }
    if (t instanceof MapType m) {
      return ColumnType.of(m.keyType()) != null && ColumnType.of(m.valueType()) != null;
    }
    if (t instanceof StructType s) {
      for (StructField f : s.fields()) {
        if (ColumnType.of(f.dataType()) == null) {
          return false;
        }
      }
      return true;
    }
    return false;
  }

  /** The cuDF type a builder of host columns takes for Spark type {@code t}, children included. */
  public static HostColumnVector.DataType hostType(DataType t) {
    if (t instanceof BinaryType) {
      return new HostColumnVector.ListType(
          true, new HostColumnVector.BasicType(false, DType.UINT8));
    }
    if (t instanceof ArrayType a) {
      return new HostColumnVector.ListType(true, hostType(a.elementType()));
    }
    if (t instanceof MapType m) {
      return new HostColumnVector.ListType(
          true,
          new HostColumnVector.StructType(false, hostType(m.keyType()), hostType(m.valueType())));
    }
    if (t instanceof StructType s) {
      List<HostColumnVector.DataType> children = new ArrayList<>();
      for (StructField f : s.fields()) {
        children.add(hostType(f.dataType()));
      }
      return new HostColumnVector.StructType(true, children);
    }
    return new HostColumnVector.BasicType(true, ColumnType.dtypeOf(t));
  }

  /** The Spark types of a nested type's cuDF children, in order; empty for a flat type. */
  public static DataType[] children(DataType t) {
    if (t instanceof BinaryType) {
      return new DataType[] {org.apache.spark.sql.types.DataTypes.ByteType};
    }
    if (t instanceof ArrayType a) {
      return new DataType[] {a.elementType()};
    }
    if (t instanceof MapType m) {
      return new DataType[] {entries(m)};
    }
    if (t instanceof StructType s) {
      DataType[] out = new DataType[s.fields().length];
      for (int i = 0; i < out.length; i++) {
        out[i] = s.fields()[i].dataType();
      }
      return out;
    }
    return new DataType[0];
  }

  /** A map's entries as the struct cuDF holds them: {@code key}, then {@code value}. */
  public static StructType entries(MapType m) {
    return new StructType()
        .add("key", m.keyType(), false)
        .add("value", m.valueType(), m.valueContainsNull());
  }

  /** A cuDF column's shape, host or device: its type and its children's, read out whole. */
  public record Shape(DType type, List<Shape> children) {}

  /** A host column's shape. */
  public static Shape of(HostColumnVectorCore c) {
    List<Shape> kids = new ArrayList<>();
    for (int i = 0; i < c.getNumChildren(); i++) {
      kids.add(of(c.getChildColumnView(i)));
    }
    return new Shape(c.getType(), kids);
  }

  /** A device column's shape; each child's view is closed once its shape is read. */
  public static Shape of(ColumnView c) {
    List<Shape> kids = new ArrayList<>();
    for (int i = 0; i < c.getNumChildren(); i++) {
      try (ColumnView v = c.getChildColumnView(i)) {
        kids.add(of(v));
      }
    }
    return new Shape(c.getType(), kids);
  }

  /**
   * Where a column's cuDF shape differs from Spark type {@code t}: the path to the first part that
   * differs and the two types ({@code tags.element: INT32 on the GPU, declared bigint}), or null
   * when they agree at every level. Binary's child may be INT8 or UINT8.
   */
  public static String mismatch(DataType t, Shape actual, String path) {
    DType expected = ColumnType.dtypeOf(t);
    if (!expected.equals(actual.type())) {
      return path + ": " + actual.type() + " on the GPU, declared " + t.simpleString();
    }
    DataType[] kids = children(t);
    if (kids.length == 0) {
      return null;
    }
    if (actual.children().size() != kids.length) {
      return path
          + ": "
          + actual.children().size()
          + " children on the GPU, declared "
          + t.simpleString()
          + " has "
          + kids.length;
    }
    for (int i = 0; i < kids.length; i++) {
      Shape c = actual.children().get(i);
      if (t instanceof BinaryType) {
        if (!c.type().equals(DType.UINT8) && !c.type().equals(DType.INT8)) {
          return path + ": a list of " + c.type() + " on the GPU, declared binary (bytes)";
        }
        continue;
      }
      String why = mismatch(kids[i], c, path + "." + childName(t, i));
      if (why != null) {
        return why;
      }
    }
    return null;
  }

  private static String childName(DataType t, int i) {
    if (t instanceof ArrayType) {
      return "element";
    }
    if (t instanceof MapType) {
      return "entries";
    }
    if (t instanceof StructType s) {
      return s.fields()[i].name();
    }
    return String.valueOf(i);
  }
}
