package dev.overlap.jobs.etl;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.GpuKernel;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.resource.Closing;
import dev.overlap.executor.trace.Diagnostics;
import dev.overlap.executor.types.ColumnType;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;

/**
 * A query's first batches load the CUDA kernels its cuDF calls use, which takes longer than the
 * batches themselves: etl's kernels run once on a few made-up rows, on a thread of their own, while
 * the driver plans the queries, on this JVM's GPU (the executor's, in local mode; a driver of a
 * cluster has none, and runs none). Its failure is logged and changes nothing else.
 */
final class KernelWarmUp {
  /** Its lines go to the run's log only (conf/log4j2.properties), not to the terminal. */
  private static final Logger LOG = Diagnostics.logger(KernelWarmUp.class);

  /** Rows of the made-up input: a few of every group and of every filter's outcome. */
  private static final int ROWS = 64;

  /** The longest a query waits for the warm-up before it starts. */
  private static final long WAIT_MS = 3000;

  private final Thread thread;

  private KernelWarmUp(Thread thread) {
    this.thread = thread;
  }

  /**
   * Starts warming Q1's and Q6's kernels over {@code lineitem}'s columns ({@link #start}), unless
   * {@code spark.overlap.driver.kernelWarmUp} is false.
   */
  static KernelWarmUp etl(Dataset<Row> lineitem, EtlShape shape) {
    var conf = lineitem.sparkSession().conf();
    boolean on = OverlapConf.KERNEL_WARM_UP.read(k -> conf.get(k, null));
    if (!on || !GpuStatus.current().gpu()) {
      return new KernelWarmUp(null);
    }
    return start(
        List.of(new Q1Kernel(shape), new Q6Kernel(shape)),
        List.of(
            lineitem.selectExpr(shape.select(Q1Kernel.INPUT)).schema(),
            lineitem.selectExpr(shape.select(Q6Kernel.INPUT)).schema()));
  }

  /**
   * Starts running each kernel on made-up rows of its input schema, when this JVM's executor has a
   * GPU; else does nothing.
   */
  static KernelWarmUp start(List<GpuKernel> kernels, List<StructType> inputs) {
    GpuStatus gpu = GpuStatus.current();
    if (!gpu.gpu() || gpu.device().isEmpty()) {
      return new KernelWarmUp(null);
    }
    int device = gpu.device().get();
    Thread t =
        new Thread(
            () -> {
              long start = System.nanoTime();
              try {
                Cuda.setDevice(device);
                for (int k = 0; k < kernels.size(); k++) {
                  try (Table in = madeUp(inputs.get(k));
                      Table out = kernels.get(k).apply(in)) {
                    Cuda.DEFAULT_STREAM.sync();
                  }
                }
                LOG.info(
                    "etl's kernels warmed up in {} ms", (System.nanoTime() - start) / 1_000_000);
              } catch (RuntimeException | Error e) {
                LOG.warn("etl's kernel warm-up failed (the first query will be slower)", e);
              }
            },
            "overlap-etl-warmup");
    t.setDaemon(true);
    t.start();
    return new KernelWarmUp(t);
  }

  /**
   * Waits, a few seconds at most, for the warm-up to end, so that a query's figures are its own.
   */
  void await() {
    if (thread == null) {
      return;
    }
    try {
      thread.join(WAIT_MS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Whether the warm-up thread still runs. */
  boolean running() {
    return thread != null && thread.isAlive();
  }

  /**
   * {@value #ROWS} rows of {@code schema}: strings of a few letters, numbers from 0.01 to 0.12 (1
   * to 12 as integers: every filter on quantity and discount keeps some), days from 1994 to 1995;
   * other types are nulls.
   */
  static Table madeUp(StructType schema) {
    DType[] types = ColumnType.dtypesOf(schema);
    List<ColumnVector> cols = new ArrayList<>();
    String[] letters = {"A", "N", "R", "F", "O"};
    String[] strings = new String[ROWS];
    double[] numbers = new double[ROWS];
    int[] days = new int[ROWS];
    for (int i = 0; i < ROWS; i++) {
      strings[i] = letters[i % letters.length];
      numbers[i] = 0.01 * (1 + i % 12);
      days[i] = 8766 + 11 * i; // 1994-01-01 on
    }
    try (Scalar hundred = Scalar.fromDouble(100)) {
      for (DType t : types) {
        if (t.equals(DType.STRING)) {
          cols.add(ColumnVector.fromStrings(strings));
        } else if (t.equals(DType.TIMESTAMP_DAYS)) {
          cols.add(ColumnVector.timestampDaysFromBoxedInts(box(days)));
        } else if (t.isDecimalType() || t.equals(DType.FLOAT64) || t.equals(DType.FLOAT32)) {
          try (ColumnVector d = ColumnVector.fromDoubles(numbers)) {
            cols.add(d.castTo(t));
          }
        } else if (t.equals(DType.INT64) || t.equals(DType.INT32)) {
          try (ColumnVector d = ColumnVector.fromDoubles(numbers);
              ColumnVector whole = d.mul(hundred)) {
            cols.add(whole.castTo(t));
          }
        } else {
          try (Scalar none = Scalar.fromNull(t)) {
            cols.add(ColumnVector.fromScalar(none, ROWS));
          }
        }
      }
      return new Table(cols.toArray(new ColumnVector[0]));
    } finally {
      Closing.all(cols);
    }
  }

  private static Integer[] box(int[] v) {
    Integer[] out = new Integer[v.length];
    for (int i = 0; i < v.length; i++) {
      out[i] = v[i];
    }
    return out;
  }
}
