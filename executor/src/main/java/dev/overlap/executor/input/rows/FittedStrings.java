package dev.overlap.executor.input.rows;

import java.util.Arrays;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The string values of a columnar range that fit a batch, read once: {@link #fit} reads them, the
 * writer then {@link #take}s them to write without reading again. Dictionary-encoded vectors are
 * decoded once per id and call. Used by one {@link HostBatchWriter}, on its task's thread.
 */
public final class FittedStrings {
  /** Dictionary ids below this are decoded once per call; larger ones on every read. */
  private static final int DICTIONARY_CACHE_IDS = 1 << 16;

  // Per string column: the values fit read, for take to hand out.
  private final UTF8String[][] fitted;
  // Per string column: values decoded from a dictionary in this call, by id (see decoded()).
  private final UTF8String[][] dictValues;
  private final int[][] dictStamps;
  private int generation;
  private long refusedBytes = -1;

  FittedStrings(int columns) {
    fitted = new UTF8String[columns][];
    dictValues = new UTF8String[columns][];
    dictStamps = new int[columns][];
  }

  /**
   * Reads up to {@code take} values of string column {@code c} (null for a null), stopping at the
   * first that does not fit in {@code room} bytes; {@link #refusedBytes} then gives its length.
   *
   * @return how many fit
   */
  int fit(int c, ColumnVector v, int start, int take, long room) {
    refusedBytes = -1;
    if (fitted[c] == null || fitted[c].length < take) {
      fitted[c] = new UTF8String[Math.max(take, 1024)];
    }
    UTF8String[] vals = fitted[c];
    // A dictionary-encoded vector copies a value's bytes out of the dictionary on every read:
    // decode each id once per call (the dictionary may change with the next batch).
    WritableColumnVector ids =
        v instanceof WritableColumnVector w && w.hasDictionary() ? w.getDictionaryIds() : null;
    if (++generation == 0) { // wrapped: no stamp may look current
      generation = 1;
      for (int[] stamps : dictStamps) {
        if (stamps != null) {
          Arrays.fill(stamps, 0);
        }
      }
    }
    for (int i = 0; i < take; i++) {
      if (v.isNullAt(start + i)) {
        vals[i] = null;
        continue;
      }
      UTF8String s =
          ids == null
              ? v.getUTF8String(start + i)
              : decoded(c, v, ids.getDictId(start + i), i + start);
      int len = s.numBytes();
      room -= len;
      if (room < 0) {
        refusedBytes = len;
        return i;
      }
      vals[i] = s;
    }
    return take;
  }

  /** The length of the value the last {@link #fit} stopped at; -1 when all fit. */
  long refusedBytes() {
    return refusedBytes;
  }

  /**
   * Value {@code i} of column {@code c} that {@link #fit} read, null for a null. Forgets it: the
   * values may point into the source batch, which the reader reuses.
   */
  UTF8String take(int c, int i) {
    UTF8String s = fitted[c][i];
    fitted[c][i] = null;
    return s;
  }

  private UTF8String decoded(int c, ColumnVector v, int id, int row) {
    if (id < 0 || id >= DICTIONARY_CACHE_IDS) {
      return v.getUTF8String(row);
    }
    if (dictValues[c] == null || dictValues[c].length <= id) {
      // Grown arrays start empty: values of this call decoded so far are decoded again.
      int size = Math.min(DICTIONARY_CACHE_IDS, Math.max(64, 2 * (id + 1)));
      dictValues[c] = new UTF8String[size];
      dictStamps[c] = new int[size];
    }
    if (dictStamps[c][id] != generation) {
      dictValues[c][id] = v.getUTF8String(row);
      dictStamps[c][id] = generation;
    }
    return dictValues[c][id];
  }
}
