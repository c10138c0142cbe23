package dev.overlap.executor.task;

import java.util.Iterator;

/** A GPU path's results stood in for: some values, then a failure as the pipeline wraps it. */
final class FailingRows {
  private FailingRows() {}

  /** Gives -1, -2, ... for {@code rows} values, then throws {@code failure} wrapped. */
  static Iterator<Integer> after(int rows, RuntimeException failure) {
    return new Iterator<>() {
      int given;

      @Override
      public boolean hasNext() {
        if (given < rows) {
          return true;
        }
        throw new RuntimeException("pipeline task failed", failure);
      }

      @Override
      public Integer next() {
        hasNext();
        return -(++given);
      }
    };
  }
}
