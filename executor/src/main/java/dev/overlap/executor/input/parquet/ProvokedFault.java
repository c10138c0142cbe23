package dev.overlap.executor.input.parquet;

import ai.rapids.cudf.ColumnView;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.DeviceMemoryBufferView;
import ai.rapids.cudf.Scalar;
import java.util.Optional;

/**
 * A test hook: a real fatal CUDA error (an illegal memory access) once a file whose name is the
 * system property {@value #PROPERTY} has been decoded, at the point where cuDF's decode of a broken
 * file faults. The GPU suite sets it in a JVM of its own, since the fault leaves that process's
 * CUDA context unusable, to prove that such a file ends with Spark's answer. Unset, it costs one
 * property read per decoded piece.
 */
final class ProvokedFault {
  static final String PROPERTY = "overlap.test.faultOnDecodeOf";

  // An address no allocation has: reading it faults.
  private static final long UNMAPPED = 0x10L;

  private ProvokedFault() {}

  /** Faults the GPU when {@code file}'s name is the property's value. */
  static void at(String file) {
    String name = System.getProperty(PROPERTY);
    if (name == null || !file.endsWith("/" + name)) {
      return;
    }
    try (DeviceMemoryBufferView nowhere = new DeviceMemoryBufferView(UNMAPPED, 4L << 20);
        ColumnView ints = new ColumnView(DType.INT32, 1L << 20, Optional.of(0L), nowhere, null);
        Scalar sum = ints.sum()) {
      throw new IllegalStateException("reading an unmapped address did not fault: " + sum);
    }
  }
}
