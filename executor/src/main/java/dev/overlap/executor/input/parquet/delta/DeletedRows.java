package dev.overlap.executor.input.parquet.delta;

import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.delta.actions.DeletionVectorDescriptor;
import org.apache.spark.sql.delta.deletionvectors.StoredBitmap$;
import org.apache.spark.sql.delta.storage.dv.DeletionVectorStore$;

/**
 * The rows of one Parquet file that its deletion vector lists, by their index in the file (from 0,
 * in file order across its row groups), and which rows of some of its row groups are kept.
 */
public final class DeletedRows {
  private final long[] positions;
  private final long[] groupStarts;
  private final long[] groupRows;

  /**
   * @param positions the deleted rows' indices in the file, ascending
   * @param groupRows the rows in each of the file's row groups, in file order
   */
  public DeletedRows(long[] positions, long[] groupRows) {
    this.positions = positions;
    this.groupRows = groupRows.clone();
    this.groupStarts = new long[groupRows.length];
    long at = 0;
    for (int g = 0; g < groupRows.length; g++) {
      groupStarts[g] = at;
      at += groupRows[g];
    }
  }

  /**
   * Reads the deletion vector {@code dv} of a file whose row groups hold {@code groupRows} rows,
   * with Delta's own reader (inline, or from the table's folder, its checksum checked).
   */
  public static DeletedRows load(DeletionVector dv, long[] groupRows, Configuration conf) {
    DeletionVectorDescriptor d = DeletionVectorDescriptor.deserializeFromBase64(dv.descriptor());
    if (d.cardinality() == 0) {
      return new DeletedRows(new long[0], groupRows);
    }
    long[] rows =
        StoredBitmap$.MODULE$
            .create(d, new Path(dv.table()))
            .load(DeletionVectorStore$.MODULE$.createInstance(conf))
            .values();
    return new DeletedRows(rows, groupRows);
  }

  /** The deleted rows' indices in the file, ascending. */
  public long[] positions() {
    return positions.clone();
  }

  /** How many of the rows of row groups {@code groups} (indices in the file) are deleted. */
  public long count(int[] groups) {
    long n = 0;
    for (int g : groups) {
      n += indexOf(groupStarts[g] + groupRows[g]) - indexOf(groupStarts[g]);
    }
    return n;
  }

  /** The index of the first deleted row at or after row {@code row} of the file. */
  private int indexOf(long row) {
    int k = Arrays.binarySearch(positions, row);
    return k < 0 ? -k - 1 : k;
  }

  /**
   * Which rows of row groups {@code groups} (indices in the file, in the order they are decoded,
   * holding {@code groupRows} rows each) are kept, in that order; null when all are.
   */
  public boolean[] keep(int[] groups, long[] groupRows) {
    long total = Arrays.stream(groupRows).sum();
    boolean[] keep = null;
    long at = 0;
    for (int i = 0; i < groups.length; i++) {
      long first = groupStarts[groups[i]];
      long end = first + groupRows[i];
      for (int k = indexOf(first); k < positions.length && positions[k] < end; k++) {
        if (keep == null) {
          keep = new boolean[Math.toIntExact(total)];
          Arrays.fill(keep, true);
        }
        keep[Math.toIntExact(at + positions[k] - first)] = false;
      }
      at += groupRows[i];
    }
    return keep;
  }
}
