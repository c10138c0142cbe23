package dev.overlap.executor.input.parquet;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.parquet.hadoop.metadata.FileMetaData;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.LogicalTypeAnnotation.DateLogicalTypeAnnotation;
import org.apache.parquet.schema.LogicalTypeAnnotation.DecimalLogicalTypeAnnotation;
import org.apache.parquet.schema.LogicalTypeAnnotation.IntLogicalTypeAnnotation;
import org.apache.parquet.schema.LogicalTypeAnnotation.StringLogicalTypeAnnotation;
import org.apache.parquet.schema.LogicalTypeAnnotation.TimeUnit;
import org.apache.parquet.schema.LogicalTypeAnnotation.TimestampLogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * How one file's columns answer a kernel's input: the file's name for each column (null when the
 * file lacks it: Spark reads nulls), in the order the decode returns them. Built only when the GPU
 * decodes the file exactly as Spark's reader would; otherwise {@link #of} says why not.
 */
public final class FileColumns {
  static final String SPARK_VERSION = "org.apache.spark.version";
  static final String LEGACY_DATETIME = "org.apache.spark.legacyDateTime";
  static final String LEGACY_INT96 = "org.apache.spark.legacyINT96";

  private final String[] include;
  private final boolean nested;
  private final boolean wholeFile;
  private final int[] decodedIndex;

  private FileColumns(String[] include, boolean nested, boolean wholeFile, int[] decodedIndex) {
    this.include = include;
    this.nested = nested;
    this.wholeFile = wholeFile;
    this.decodedIndex = decodedIndex;
  }

  /** Whether a column to decode is nested (the reader then selects none: see ParquetSource). */
  public boolean nested() {
    return nested;
  }

  /** Whether the columns to decode are every top-level column of the file. */
  public boolean wholeFile() {
    return wholeFile;
  }

  /** The file's columns to decode, in the file's order. */
  public String[] include() {
    return include;
  }

  /** Per kernel input column, its index among the decoded columns, or -1 when the file lacks it. */
  public int decodedIndex(int column) {
    return decodedIndex[column];
  }

  /**
   * Matches the kernel's columns to {@code file}'s schema.
   *
   * @throws NotForGpu naming the file and column when the GPU would not read it as Spark does
   */
  public static FileColumns of(ScanColumns scan, FileMetaData file, String fileName)
      throws NotForGpu {
    MessageType schema = file.getSchema();
    StructField[] fields = scan.kernelSchema().fields();
    int[] fileField = new int[fields.length];
    boolean dated = false;
    boolean int96 = false;
    for (int c = 0; c < fields.length; c++) {
      String name = scan.fileNames()[c];
      fileField[c] = find(schema, name, scan.caseSensitive(), fileName);
      if (fileField[c] >= 0) {
        Type t = schema.getType(fileField[c]);
        String why = mismatch(t, fields[c].dataType());
        if (why != null) {
          throw new NotForGpu(
              fileName
                  + ": column '"
                  + t.getName()
                  + "' is "
                  + t.toString().trim()
                  + ", read as "
                  + fields[c].dataType().simpleString()
                  + ": "
                  + why);
        }
        int96 |=
            t.isPrimitive()
                && t.asPrimitiveType().getPrimitiveTypeName() == PrimitiveTypeName.INT96;
        dated |= dated(fields[c].dataType());
      }
    }
    if (int96) {
      String legacy = legacyInt96(file.getKeyValueMetaData());
      if (legacy != null) {
        throw new NotForGpu(fileName + ": " + legacy);
      }
    }
    if (dated) {
      String legacy = legacyCalendar(file.getKeyValueMetaData(), scan.rebaseMode());
      if (legacy != null) {
        throw new NotForGpu(fileName + ": " + legacy);
      }
    }
    // The decode returns columns in the file's order: number them so.
    List<Integer> present = new ArrayList<>();
    for (int f : fileField) {
      if (f >= 0 && !present.contains(f)) {
        present.add(f);
      }
    }
    if (present.isEmpty()) {
      throw new NotForGpu(fileName + " has none of the columns read");
    }
    present.sort(null);
    String[] include = new String[present.size()];
    boolean nested = false;
    for (int i = 0; i < include.length; i++) {
      include[i] = schema.getType(present.get(i)).getName();
      nested |= !schema.getType(present.get(i)).isPrimitive();
    }
    int[] decoded = new int[fields.length];
    for (int c = 0; c < fields.length; c++) {
      decoded[c] = fileField[c] < 0 ? -1 : present.indexOf(fileField[c]);
    }
    return new FileColumns(include, nested, include.length == schema.getFieldCount(), decoded);
  }

  private static int find(MessageType schema, String name, boolean caseSensitive, String file)
      throws NotForGpu {
    int found = -1;
    List<Type> top = schema.getFields();
    for (int i = 0; i < top.size(); i++) {
      String n = top.get(i).getName();
      if (caseSensitive ? n.equals(name) : n.equalsIgnoreCase(name)) {
        if (found >= 0) {
          throw new NotForGpu(file + ": several columns match '" + name + "' when case is ignored");
        }
        found = i;
      }
    }
    return found;
  }

  /** Why Spark's type {@code want} is not a plain decode of {@code t}; null when it is. */
  static String mismatch(Type t, DataType want) {
    if (!t.isPrimitive() || t.isRepetition(Type.Repetition.REPEATED)) {
      return NestedColumns.mismatch(t, want);
    }
    if (want instanceof ArrayType || want instanceof MapType || want instanceof StructType) {
      return "not a group, read as " + want.simpleString();
    }
    PrimitiveType p = t.asPrimitiveType();
    PrimitiveTypeName n = p.getPrimitiveTypeName();
    LogicalTypeAnnotation a = p.getLogicalTypeAnnotation();
    if (n == PrimitiveTypeName.INT96) {
      return want instanceof TimestampType ? null : "INT96 is read only as a timestamp";
    }
    boolean ok;
    if (want instanceof BooleanType) {
      ok = n == PrimitiveTypeName.BOOLEAN;
    } else if (want instanceof ByteType) {
      ok = n == PrimitiveTypeName.INT32 && isInt(a, 8);
    } else if (want instanceof ShortType) {
      ok = n == PrimitiveTypeName.INT32 && isInt(a, 16);
    } else if (want instanceof IntegerType) {
      ok = n == PrimitiveTypeName.INT32 && (a == null || isInt(a, 32));
    } else if (want instanceof LongType) {
      ok =
          (n == PrimitiveTypeName.INT64 && (a == null || isInt(a, 64)))
              || (n == PrimitiveTypeName.INT32 && (a == null || isInt(a, 32)));
    } else if (want instanceof FloatType) {
      ok = n == PrimitiveTypeName.FLOAT;
    } else if (want instanceof DoubleType) {
      ok = n == PrimitiveTypeName.DOUBLE || n == PrimitiveTypeName.FLOAT;
    } else if (want instanceof StringType) {
      ok = n == PrimitiveTypeName.BINARY && (a == null || a instanceof StringLogicalTypeAnnotation);
    } else if (want instanceof BinaryType) {
      // Decoded as strings, then seen as lists of bytes (ParquetDecode).
      ok = n == PrimitiveTypeName.BINARY && (a == null || a instanceof StringLogicalTypeAnnotation);
    } else if (want instanceof DecimalType d) {
      ok =
          a instanceof DecimalLogicalTypeAnnotation fd
              && fd.getScale() == d.scale()
              && fd.getPrecision() <= d.precision()
              && (n == PrimitiveTypeName.INT32
                  || n == PrimitiveTypeName.INT64
                  || n == PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY);
    } else if (want instanceof DateType) {
      ok = n == PrimitiveTypeName.INT32 && a instanceof DateLogicalTypeAnnotation;
    } else if (want instanceof TimestampType || want instanceof TimestampNTZType) {
      ok =
          n == PrimitiveTypeName.INT64
              && a instanceof TimestampLogicalTypeAnnotation ts
              && ts.getUnit() != TimeUnit.NANOS
              && (want instanceof TimestampType || !ts.isAdjustedToUTC());
    } else {
      ok = false;
    }
    return ok ? null : "not a type the GPU decode reads as Spark does";
  }

  /** Whether {@code t} holds dates or timestamps, at any level. */
  private static boolean dated(DataType t) {
    if (t instanceof DateType || t instanceof TimestampType || t instanceof TimestampNTZType) {
      return true;
    }
    for (DataType c : dev.overlap.executor.types.NestedTypes.children(t)) {
      if (dated(c)) {
        return true;
      }
    }
    return false;
  }

  private static boolean isInt(LogicalTypeAnnotation a, int bits) {
    return a instanceof IntLogicalTypeAnnotation i && i.isSigned() && i.getBitWidth() == bits;
  }

  /**
   * Why a file's INT96 timestamps may need Spark's rebase from the legacy calendar (or the Impala
   * conversion), so that the host reads them; null for a file Spark 3.1 or later wrote in the
   * proleptic calendar, which the GPU decodes exactly.
   */
  static String legacyInt96(Map<String, String> kv) {
    String version = kv.get(SPARK_VERSION);
    if (version == null) {
      return "INT96 timestamps from a writer other than Spark are read on the host";
    }
    if (olderThan(version, 3, 1) || kv.containsKey(LEGACY_INT96)) {
      return "INT96 timestamps written by Spark "
          + version
          + " in the legacy calendar are read on the host";
    }
    return null;
  }

  /** Whether a version string {@code a.b.c} is before {@code major.minor}. */
  static boolean olderThan(String version, int major, int minor) {
    String[] p = version.split("[.-]");
    try {
      int ma = Integer.parseInt(p[0]);
      int mi = p.length > 1 ? Integer.parseInt(p[1]) : 0;
      return ma < major || (ma == major && mi < minor);
    } catch (NumberFormatException e) {
      return true;
    }
  }

  /**
   * Why dates and timestamps of a file need Spark's rebase from the legacy hybrid calendar; null
   * when they do not. A file written by Spark says which calendar it used; for any other writer the
   * session's mode decides.
   */
  static String legacyCalendar(Map<String, String> kv, String rebaseMode) {
    String version = kv.get(SPARK_VERSION);
    if (version != null) {
      if (olderThan(version, 3, 0) || kv.containsKey(LEGACY_DATETIME)) {
        return "written by Spark "
            + version
            + " in the legacy calendar; its dates and timestamps are rebased on the host";
      }
      return null;
    }
    if ("LEGACY".equals(rebaseMode.toUpperCase(Locale.ROOT))) {
      return "spark.sql.parquet.datetimeRebaseModeInRead=LEGACY rebases its dates and timestamps"
          + " on the host";
    }
    return null;
  }
}
