package dev.overlap.executor.output.rows;

import ai.rapids.cudf.HostColumnVector;
import dev.overlap.executor.types.ColumnType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A cuDF host column seen as a Spark {@link ColumnVector}, without copying. Strings are views into
 * the host buffer: valid until the owning {@link HostTable} is closed. Closing the adapter does not
 * close the cuDF column; the table does that.
 */
public final class HostColumnAdapter extends ColumnVector {
  private final HostColumnVector col;
  private final ColumnType type;
  private final long dataAddress;
  private final long offsetsAddress;

  HostColumnAdapter(DataType sparkType, HostColumnVector col) {
    super(sparkType);
    this.col = col;
    this.type = ColumnType.of(sparkType);
    this.dataAddress = col.getData() == null ? 0 : col.getData().getAddress();
    this.offsetsAddress = col.getOffsets() == null ? 0 : col.getOffsets().getAddress();
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
    throw new UnsupportedOperationException("arrays are not supported");
  }

  @Override
  public ColumnarMap getMap(int ordinal) {
    throw new UnsupportedOperationException("maps are not supported");
  }

  @Override
  public byte[] getBinary(int rowId) {
    throw new UnsupportedOperationException("binary is not supported");
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    throw new UnsupportedOperationException("structs are not supported");
  }
}
