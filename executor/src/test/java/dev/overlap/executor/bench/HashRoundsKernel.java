package dev.overlap.executor.bench;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.ColumnView;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.GpuKernel;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * A kernel whose cost is arithmetic rather than device-memory traffic: {@code rounds} rounds of
 * SHA-1 over a bigint column {@code x} (the first round hashes the 8-byte value, each later round
 * the previous round's 40-character hex digest; one 64-byte SHA-1 block either way: 80 rounds of
 * integer operations for 48 to 88 bytes of device memory read and written). A fractional part
 * hashes that fraction of the rows once more (or, below one round, only that fraction), so the cost
 * can be set finely. The result is the first row's final digest and the row count.
 *
 * <p>{@link PassesKernel} streams through device memory, and on the H200 its kernels slow down
 * while the copy engine writes into the same memory; this one leaves most of the memory bandwidth
 * to the copies.
 */
final class HashRoundsKernel implements GpuKernel {
  private static final long serialVersionUID = 1L;

  private final double rounds;

  HashRoundsKernel(double rounds) {
    if (!(rounds > 0)) {
      throw new IllegalArgumentException("rounds must be positive: " + rounds);
    }
    this.rounds = rounds;
  }

  @Override
  public StructType outputSchema(StructType input) {
    return new StructType().add("digest", DataTypes.StringType).add("n", DataTypes.LongType, false);
  }

  @Override
  public Table apply(Table input) {
    ColumnVector x = input.getColumn(0);
    int rows = (int) x.getRowCount();
    int full = (int) rounds;
    int part = (int) Math.round((rounds - full) * rows);
    if (full == 0 && part == 0) {
      part = 1;
    }
    ColumnVector cur = null;
    try {
      for (int r = 0; r < full; r++) {
        ColumnVector next = ColumnVector.sha1Hash(cur == null ? x : cur);
        if (cur != null) {
          cur.close();
        }
        cur = next;
      }
      if (part > 0) {
        // One more round over the first `part` rows; the views do not own their data.
        ColumnView[] views = (cur == null ? x : cur).splitAsViews(part);
        try {
          ColumnVector next = ColumnVector.sha1Hash(views[0]);
          if (cur != null) {
            cur.close();
          }
          cur = next;
        } finally {
          for (ColumnView v : views) {
            v.close();
          }
        }
      }
      try (Scalar first = cur.getScalarElement(0);
          ColumnVector digest = ColumnVector.fromScalar(first, 1);
          ColumnVector n = ColumnVector.fromLongs(rows)) {
        return new Table(digest, n);
      }
    } finally {
      if (cur != null) {
        cur.close();
      }
    }
  }
}
