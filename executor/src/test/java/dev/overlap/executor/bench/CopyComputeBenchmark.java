package dev.overlap.executor.bench;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.HostMemoryBuffer;
import ai.rapids.cudf.PinnedMemoryPool;
import ai.rapids.cudf.Rmm;
import ai.rapids.cudf.RmmAllocationMode;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.GpuKernel;
import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.compute.KernelStage;
import dev.overlap.executor.gpu.StreamPair;
import dev.overlap.executor.input.rows.BatchLayout;
import dev.overlap.executor.input.rows.HostBatch;
import dev.overlap.executor.input.rows.HostBatchWriter;
import dev.overlap.executor.input.rows.PackedTable;
import dev.overlap.executor.input.rows.PackedUpload;
import dev.overlap.executor.output.rows.HostTable;
import dev.overlap.executor.output.rows.RowsDownload;
import dev.overlap.executor.pipeline.BatchStages;
import dev.overlap.executor.pipeline.DeviceBudget;
import dev.overlap.executor.pipeline.PipelineMetrics;
import dev.overlap.executor.pipeline.StagePipeline;
import dev.overlap.executor.pipeline.TaskLane;
import dev.overlap.executor.types.ColumnType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Copy and compute, side by side in one run on the same data and kernel: the pinned host-to-device
 * peak; the naive path (pageable memory, synchronous copy, then compute); serial copy-then-compute
 * from pinned memory; and the pipeline (StagePipeline with the cuDF stages), for a copy-bound, a
 * balanced and a compute-bound kernel. Medians of {@code runs} timed runs after one warm-up.
 *
 * <p>Two kernel families: {@link PassesKernel}, which streams through device memory, and {@link
 * HashRoundsKernel}, whose cost is integer arithmetic. Each is calibrated in the run so that its
 * balanced cost takes as long as the copy.
 *
 * <p>Usage: {@code CopyComputeBenchmark [chunks=64] [chunkMiB=128] [runs=5] [main|diag]}: {@code
 * main} prints the main table only, {@code diag} (the default) adds the diagnostics.
 */
public final class CopyComputeBenchmark {
  private static final StructType SCHEMA = new StructType().add("x", DataTypes.LongType, false);

  private final int chunks;
  private final long chunkBytes;
  private final int rows;
  private final int runs;
  private final HostMemoryBuffer[] pinned;
  private final HostMemoryBuffer[] pageable;
  private final BatchLayout layout;
  private final HostBatchWriter writer;
  private final ColumnarBatch source;

  CopyComputeBenchmark(int chunks, int chunkMiB, int runs) {
    this.chunks = chunks;
    this.chunkBytes = (long) chunkMiB << 20;
    this.rows = (int) (chunkBytes / 8);
    this.runs = runs;
    this.layout =
        new BatchLayout(new ColumnType[] {ColumnType.LONG}, chunkBytes + (1 << 20), rows, 1);
    this.writer = new HostBatchWriter(SCHEMA, layout);
    OnHeapColumnVector v = new OnHeapColumnVector(rows, DataTypes.LongType);
    java.util.Random rnd = new java.util.Random(42);
    for (int i = 0; i < rows; i++) {
      v.putLong(i, rnd.nextLong() >> 8);
    }
    this.source = new ColumnarBatch(new OnHeapColumnVector[] {v}, rows);
    pinned = new HostMemoryBuffer[chunks];
    pageable = new HostMemoryBuffer[chunks];
    for (int i = 0; i < chunks; i++) {
      pinned[i] = PinnedMemoryPool.allocate(chunkBytes + (1 << 20));
      pageable[i] = HostMemoryBuffer.allocate(chunkBytes, false);
      pack(i).close(); // fills pinned[i]
      pageable[i].copyFromHostBuffer(0, pinned[i], dataOffset(), chunkBytes);
    }
  }

  private long dataOffset() {
    return BatchLayout.validityBytesPadded(rows);
  }

  /** Packs chunk i into its pinned buffer (a bulk copy from the Spark vector). */
  private HostBatch pack(int i) {
    writer.begin(pinned[i], () -> {});
    writer.appendColumns(source, 0, rows);
    return writer.finish();
  }

  private double medianSeconds(Runnable r) {
    return median(
        () -> {
          long s = System.nanoTime();
          r.run();
          return (System.nanoTime() - s) / 1e9;
        });
  }

  /** Median of {@code runs} timings after one warm-up; each call times itself. */
  private double median(java.util.function.DoubleSupplier timed) {
    timed.getAsDouble(); // warm-up
    double[] t = new double[runs];
    for (int i = 0; i < runs; i++) {
      t[i] = timed.getAsDouble();
    }
    Arrays.sort(t);
    return t[runs / 2];
  }

  double pinnedPeak(Cuda.Stream stream, DeviceMemoryBuffer[] dev) {
    return medianSeconds(
        () -> {
          for (int i = 0; i < chunks; i++) {
            dev[i].copyFromHostBufferAsync(0, pinned[i], dataOffset(), chunkBytes, stream);
          }
          stream.sync();
        });
  }

  double computeOnly(GpuKernel k, Table[] resident) {
    return medianSeconds(
        () -> {
          for (Table t : resident) {
            k.apply(t).close();
          }
          Cuda.DEFAULT_STREAM.sync();
        });
  }

  double serial(GpuKernel k, boolean usePinned, Cuda.Stream stream) {
    return medianSeconds(
        () -> {
          for (int i = 0; i < chunks; i++) {
            DeviceMemoryBuffer d = DeviceMemoryBuffer.allocate(chunkBytes);
            if (usePinned) {
              d.copyFromHostBufferAsync(0, pinned[i], dataOffset(), chunkBytes, stream);
              stream.sync();
            } else {
              d.copyFromHostBuffer(0, pageable[i], 0, chunkBytes); // synchronous, pageable
            }
            try (ColumnVector cv =
                    new ColumnVector(DType.INT64, rows, Optional.of(0L), d, null, null);
                Table t = new Table(cv);
                Table out = k.apply(t)) {
              for (int c = 0; c < out.getNumberOfColumns(); c++) {
                out.getColumn(c).copyToHost().close();
              }
            }
          }
        });
  }

  /**
   * Copy and compute at the same time with no pipeline in between: the copy loop of {@link
   * #pinnedPeak} on one thread and the loop of {@link #computeOnly} on another, started together.
   * Its wall time is what the hardware gives when both run at once. The copies rewrite the resident
   * chunks with the bytes they already hold (the same pinned sources), so the kernels' results do
   * not change.
   */
  double concurrent(GpuKernel k, Table[] resident, Cuda.Stream stream, DeviceMemoryBuffer[] dev) {
    return medianSeconds(
        () -> {
          Thread copier =
              new Thread(
                  () -> {
                    for (int i = 0; i < chunks; i++) {
                      dev[i].copyFromHostBufferAsync(
                          0, pinned[i], dataOffset(), chunkBytes, stream);
                    }
                    stream.sync();
                  });
          copier.start();
          for (Table t : resident) {
            k.apply(t).close();
          }
          Cuda.DEFAULT_STREAM.sync();
          try {
            copier.join();
          } catch (InterruptedException e) {
            throw new RuntimeException(e);
          }
        });
  }

  /** The kernel alone, one chunk at a time: synchronized and its result copied back after each. */
  double computeEach(GpuKernel k, Table[] resident) {
    return medianSeconds(
        () -> {
          for (Table t : resident) {
            try (Table out = k.apply(t)) {
              Cuda.DEFAULT_STREAM.sync();
              for (int c = 0; c < out.getNumberOfColumns(); c++) {
                out.getColumn(c).copyToHost().close();
              }
            }
          }
        });
  }

  /** Returns {wall seconds, upload busy seconds, compute busy seconds}. */
  double[] pipeline(GpuKernel k, StreamPair streams, int depth) throws Exception {
    double[] busy = new double[2];
    double wall =
        median(
            () -> {
              try (StagePipeline p =
                  new StagePipeline(
                      new DeviceBudget(depth * (chunkBytes + (1 << 20))), "bench", null)) {
                HostBatch[] batches = new HostBatch[chunks];
                for (int i = 0; i < chunks; i++) {
                  batches[i] = pack(i); // before the clock starts
                }
                PipelineMetrics.Snapshot before = p.metrics().snapshot();
                long s = System.nanoTime();
                try (TaskLane<HostBatch, HostTable> lane =
                    p.openLane(
                        "bench",
                        BatchStages.of(
                            new PackedUpload(streams, k.name()),
                            new KernelStage<>(k, new PackedTable()),
                            new RowsDownload(streams, k.outputSchema(SCHEMA), k.name(), true)),
                        depth)) {
                  int next = 0;
                  while (next < chunks || lane.pending() > 0) {
                    while (next < chunks && !lane.full()) {
                      lane.submit(batches[next], batches[next].deviceBytes());
                      next++;
                    }
                    lane.next().close();
                  }
                }
                long end = System.nanoTime();
                PipelineMetrics.Snapshot d = p.metrics().snapshot().minus(before);
                busy[0] = d.busy(PipelineStage.UPLOAD) / 1e9;
                busy[1] = d.busy(PipelineStage.COMPUTE) / 1e9;
                return (end - s) / 1e9;
              } catch (InterruptedException e) {
                throw new RuntimeException(e);
              }
            });
    return new double[] {wall, busy[0], busy[1]};
  }

  /**
   * Where the balanced and compute-bound pipelines lose time against {@code max(copy, compute)}:
   * the hardware bound with both loops running at once and no pipeline; the kernel alone with a
   * synchronization and a result copy after each chunk (what the pipeline's compute stage does);
   * and the pipeline itself, for both kernel families. For {@link PassesKernel} also the same
   * kernel without host-to-device copies inside it ({@link DeviceOnlyPassesKernel}).
   */
  void diagnose(
      StreamPair streams,
      Table[] resident,
      DeviceMemoryBuffer[] dev,
      double copy,
      int balanced,
      double hashBalanced)
      throws Exception {
    System.out.println(
        "diagnostics    cost    variant                 compute_s  each_s  concurrent_s  pipe_s"
            + "  pipe_upload_s  pipe_compute_s  pipe/ideal  conc/ideal");
    for (int passes : new int[] {balanced, 3 * balanced}) {
      String label = passes == balanced ? "balanced" : "compute-bound";
      try (DeviceOnlyPassesKernel lean = new DeviceOnlyPassesKernel(passes, rows)) {
        PassesKernel plain = new PassesKernel(passes, 0);
        List<Variant> variants = new ArrayList<>();
        variants.add(new Variant("pipeline", plain));
        variants.add(new Variant("device-only kernel", lean));
        for (Variant v : variants) {
          diagnoseRow(streams, resident, dev, copy, label, Integer.toString(passes), v);
        }
      }
    }
    for (double rounds : new double[] {hashBalanced, 3 * hashBalanced}) {
      diagnoseRow(
          streams,
          resident,
          dev,
          copy,
          rounds == hashBalanced ? "balanced" : "compute-bound",
          String.format(Locale.ROOT, "%.2f", rounds),
          new Variant("SHA-1 rounds pipeline", new HashRoundsKernel(rounds)));
    }
  }

  /** One way of running the pipeline in {@link #diagnose}. */
  private record Variant(String name, GpuKernel kernel) {}

  private void diagnoseRow(
      StreamPair streams,
      Table[] resident,
      DeviceMemoryBuffer[] dev,
      double copy,
      String label,
      String cost,
      Variant v)
      throws Exception {
    GpuKernel k = v.kernel();
    double compute = computeOnly(k, resident);
    double each = computeEach(k, resident);
    double conc = concurrent(k, resident, streams.copyStream(), dev);
    double[] pipe = pipeline(k, streams, 8);
    double ideal = Math.max(copy, compute);
    System.out.println(
        String.format(
            Locale.ROOT,
            "%-14s %6s  %-22s %10.3f  %6.3f  %12.3f  %6.3f  %13.3f  %14.3f  %10.3f  %10.3f",
            label,
            cost,
            v.name(),
            compute,
            each,
            conc,
            pipe[0],
            pipe[1],
            pipe[2],
            pipe[0] / ideal,
            conc / ideal));
  }

  public static void main(String[] args) throws Exception {
    int chunks = args.length > 0 ? Integer.parseInt(args[0]) : 64;
    int chunkMiB = args.length > 1 ? Integer.parseInt(args[1]) : 128;
    int runs = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    String mode = args.length > 3 ? args[3] : "diag";
    if (!mode.equals("main") && !mode.equals("diag")) {
      throw new IllegalArgumentException("mode must be main or diag: " + mode);
    }
    long total = (long) chunks * chunkMiB << 20;
    Rmm.initialize(RmmAllocationMode.POOL, null, Math.max(16L << 30, 3 * total));
    PinnedMemoryPool.initialize(total + (long) chunks * (2 << 20) + (256L << 20));
    CopyComputeBenchmark b = new CopyComputeBenchmark(chunks, chunkMiB, runs);
    System.out.printf(
        Locale.ROOT,
        "data: %d chunks x %d MiB = %.2f GB of int64, %d timed runs (median), device %d%n",
        chunks,
        chunkMiB,
        total / 1e9,
        runs,
        Cuda.getDevice());
    try (StreamPair streams = new StreamPair()) {
      DeviceMemoryBuffer[] dev = new DeviceMemoryBuffer[chunks];
      Table[] resident = new Table[chunks];
      for (int i = 0; i < chunks; i++) {
        dev[i] = DeviceMemoryBuffer.allocate(b.chunkBytes);
      }
      double copy = b.pinnedPeak(streams.copyStream(), dev);
      double peak = total / copy / 1e9;
      System.out.printf(Locale.ROOT, "pinned H2D peak: %.3f s, %.2f GB/s%n", copy, peak);
      for (int i = 0; i < chunks; i++) {
        ColumnVector cv =
            new ColumnVector(DType.INT64, b.rows, Optional.of(0L), dev[i], null, null);
        resident[i] = new Table(cv);
        cv.close();
      }
      // Calibrate the balanced kernel: compute time equal to copy time.
      double t0 = b.computeOnly(new PassesKernel(0, 0), resident);
      double t4 = b.computeOnly(new PassesKernel(4, 0), resident);
      double perPass = (t4 - t0) / 4;
      int balanced = (int) Math.max(1, Math.round((copy - t0) / perPass));
      // The same for the SHA-1 kernel, whose rounds may be fractional.
      double h1 = b.computeOnly(new HashRoundsKernel(1), resident);
      double h3 = b.computeOnly(new HashRoundsKernel(3), resident);
      double perRound = (h3 - h1) / 2;
      double hashBalanced =
          Math.max(0.05, Math.round((copy - (h1 - perRound)) / perRound * 100) / 100.0);
      GpuKernel[] kernels = {
        new PassesKernel(0, 0),
        new PassesKernel(balanced, 0),
        new PassesKernel(3 * balanced, 0),
        new HashRoundsKernel(hashBalanced),
        new HashRoundsKernel(3 * hashBalanced)
      };
      String[] costs = {
        "0",
        Integer.toString(balanced),
        Integer.toString(3 * balanced),
        String.format(Locale.ROOT, "%.2f", hashBalanced),
        String.format(Locale.ROOT, "%.2f", 3 * hashBalanced)
      };
      String[] names = {
        "copy-bound", "balanced", "compute-bound", "balanced SHA-1", "compute-bound SHA-1"
      };
      System.out.printf(
          Locale.ROOT,
          "kernel: %.4f s per pass over all chunks; balanced = %d passes%n",
          perPass,
          balanced);
      System.out.printf(
          Locale.ROOT,
          "SHA-1 kernel: %.4f s per round over all chunks; balanced = %.2f rounds%n",
          perRound,
          hashBalanced);
      System.out.println(
          "kernel               cost  copy_s  compute_s  ideal_s  naive_s  serial_s  pipe4_s"
              + "  pipeline_s  pipe/ideal  vs_serial  vs_naive  pipe_GB/s  pipe/peak");
      for (int i = 0; i < kernels.length; i++) {
        GpuKernel k = kernels[i];
        double compute = b.computeOnly(k, resident);
        double naive = b.serial(k, false, streams.copyStream());
        double serial = b.serial(k, true, streams.copyStream());
        double[] pipe4 = b.pipeline(k, streams, 4);
        double[] pipe = b.pipeline(k, streams, 8);
        double ideal = Math.max(copy, compute);
        // End-to-end input throughput; in the copy-bound case this is the upload stage's rate.
        double uploadGbs = total / pipe[0] / 1e9;
        String line =
            String.format(
                Locale.ROOT,
                "%-19s %5s  %6.3f  %9.3f  %7.3f  %7.3f  %8.3f  %7.3f  %10.3f  %10.3f  %9.2f  %8.2f"
                    + "  %9.2f  %9.3f",
                names[i],
                costs[i],
                copy,
                compute,
                ideal,
                naive,
                serial,
                pipe4[0],
                pipe[0],
                pipe[0] / ideal,
                serial / pipe[0],
                naive / pipe[0],
                uploadGbs,
                uploadGbs / peak);
        System.out.println(line);
      }
      if (!mode.equals("main")) {
        b.diagnose(streams, resident, dev, copy, balanced, hashBalanced);
      }
      for (Table t : resident) {
        t.close();
      }
    }
    for (int i = 0; i < chunks; i++) {
      b.pinned[i].close();
      b.pageable[i].close();
    }
    b.source.close();
    System.out.printf(
        Locale.ROOT, "device bytes still allocated: %d%n", Rmm.getTotalBytesAllocated());
  }
}
