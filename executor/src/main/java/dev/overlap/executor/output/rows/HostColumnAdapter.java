package dev.overlap.executor.output.rows;

import ai.rapids.cudf.HostColumnVectorCore;
import dev.overlap.executor.types.ColumnType;
import dev.overlap.executor.types.NestedTypes;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A cuDF host column seen as a Spark {@link ColumnVector}, without copying. Strings are views into
 * the host buffer: valid until the owning {@link HostTable} is closed. Closing the adapter does not
 * close the cuDF column; the table does that.
 *
 * <p>Nested columns ({@link NestedTypes}) read through adapters of their children: an array is a
 * run of its LIST's child between two offsets, a map the key and value children of its entries, a
 * struct's fields its children, binary the bytes of its list. Binary is copied (Spark's contract).
 */
public final class HostColumnAdapter extends ColumnVector {
  private final HostColumnVectorCore col;
  private final ColumnType type;
  private final long dataAddress;
  private final long offsetsAddress;
  // Nested columns: one adapter per cuDF child (a map's: its entries' key and value).
  private final HostColumnAdapter[] children;

  HostColumnAdapter(DataType sparkType, HostColumnVectorCore col) {
    super(sparkType);
    this.col = col;
    this.type = ColumnType.of(sparkType);
    this.dataAddress = col.getData() == null ? 0 : col.getData().getAddress();
    this.offsetsAddress = col.getOffsets() == null ? 0 : col.getOffsets().getAddress();
    if (sparkType instanceof MapType m) {
      HostColumnVectorCore entries = col.getChildColumnView(0);
      children =
          new HostColumnAdapter[] {
            new HostColumnAdapter(m.keyType(), entries.getChildColumnView(0)),
            new HostColumnAdapter(m.valueType(), entries.getChildColumnView(1))
          };
    } else if (sparkType instanceof BinaryType) {
      children = new HostColumnAdapter[0];
    } else {
      DataType[] kids = NestedTypes.children(sparkType);
      children = new HostColumnAdapter[kids.length];
      for (int i = 0; i < kids.length; i++) {
        children[i] = new HostColumnAdapter(kids[i], col.getChildColumnView(i));
      }
    }
  }

  @Override
  public void close() {}

  @Override
  public boolean hasNull() {
    return col.getNullCount() > 0;
  }

  @Override
  public int numNulls() {
    return (int) col.getNullCount();
  }

  @Override
  public boolean isNullAt(int rowId) {
    return col.isNull(rowId);
  }

  @Override
  public boolean getBoolean(int rowId) {
    return Platform.getByte(null, dataAddress + rowId) != 0;
  }

  @Override
  public byte getByte(int rowId) {
    return Platform.getByte(null, dataAddress + rowId);
  }

  @Override
  public short getShort(int rowId) {
    return Platform.getShort(null, dataAddress + 2L * rowId);
  }

  @Override
  public int getInt(int rowId) {
    return Platform.getInt(null, dataAddress + 4L * rowId);
  }

  @Override
  public long getLong(int rowId) {
    return Platform.getLong(null, dataAddress + 8L * rowId);
  }

  @Override
  public float getFloat(int rowId) {
    return Platform.getFloat(null, dataAddress + 4L * rowId);
  }

  @Override
  public double getDouble(int rowId) {
    return Platform.getDouble(null, dataAddress + 8L * rowId);
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    if (isNullAt(rowId)) {
      return null;
    }
    return type.readDecimal(dataAddress, rowId, precision, scale);
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    if (isNullAt(rowId)) {
      return null;
    }
    int start = Platform.getInt(null, offsetsAddress + 4L * rowId);
    int end = Platform.getInt(null, offsetsAddress + 4L * rowId + 4);
    return UTF8String.fromAddress(null, dataAddress + start, end - start);
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    if (isNullAt(rowId)) {
      return null;
    }
    int start = listOffset(rowId);
    return new ColumnarArray(children[0], start, listOffset(rowId + 1) - start);
  }

  @Override
  public ColumnarMap getMap(int rowId) {
    if (isNullAt(rowId)) {
      return null;
    }
    int start = listOffset(rowId);
    return new ColumnarMap(children[0], children[1], start, listOffset(rowId + 1) - start);
  }

  @Override
  public byte[] getBinary(int rowId) {
    if (isNullAt(rowId)) {
      return null;
    }
    int start = listOffset(rowId);
    byte[] out = new byte[listOffset(rowId + 1) - start];
    HostColumnVectorCore bytes = col.getChildColumnView(0);
    if (out.length > 0) {
      bytes.getData().getBytes(out, 0, start, out.length);
    }
    return out;
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    return children[ordinal];
  }

  private int listOffset(int index) {
    return Platform.getInt(null, offsetsAddress + 4L * index);
  }
}
