package dev.overlap.executor.input.parquet.delta;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.Table;

/** Drops a decoded table's deleted rows on the device. */
public final class DeviceKeep {
  private DeviceKeep() {}

  /**
   * The rows of {@code decoded} that {@code keep} keeps: {@code decoded} itself when {@code keep}
   * is null (every row kept), else a new table, and {@code decoded} is closed. Takes {@code
   * decoded}'s ownership either way, and closes it on failure.
   */
  public static Table rows(Table decoded, boolean[] keep) {
    if (keep == null) {
      return decoded;
    }
    try (Table in = decoded;
        ColumnVector mask = ColumnVector.fromBooleans(keep)) {
      if (mask.getRowCount() != in.getRowCount()) {
        throw new IllegalStateException(
            "a deletion vector's mask of " + mask.getRowCount() + " rows for " + in.getRowCount());
      }
      return in.filter(mask);
    }
  }
}
