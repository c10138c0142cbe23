package dev.overlap.executor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.PinnedMemoryPool;
import ai.rapids.cudf.Rmm;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import dev.overlap.executor.gpu.GpuRuntime;
import dev.overlap.executor.pipeline.PipelineMetrics;
import dev.overlap.executor.plugin.ExecutorState;
import dev.overlap.executor.testing.GpuSession;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.spark.ExceptionFailure;
import org.apache.spark.TaskContext;
import org.apache.spark.TaskKilled;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerTaskStart;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF0;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The soak of {@code PipelineSoakTest} on a real GPU: 1000 Spark tasks through the plugin's cuDF
 * stages and a real kernel (a device computation), of which a seeded tenth fail in the kernel, are
 * killed midway, or hit a real device allocation failure from RMM (the kernel asks for more than
 * the device has): once (the retry after the drain fits), until the batch is split small enough, or
 * whatever its size (the task fails with the one line). Spark runs each failed or killed task again
 * (the kernel knows the attempt from a column its input carries) and the job's rows must be exact;
 * the executor stays up throughout, every killed task ends soon after its kill, and at the end RMM
 * has nothing allocated and the pinned pool is back where it started.
 */
@Tag("gpu")
class GpuSoakGpuTest {
  private static final long SEED = 20_261_130L;
  private static final int TASKS = 1000;
  private static final int MAX_ROWS = 600;
  private static final long KILL_BOUND_MILLIS = 5_000;

  enum Fate {
    NORMAL,
    FAILS,
    KILLED,
    OOM_ONCE,
    OOM_SPLIT,
    OOM_NEVER
  }

  /** Each partition's fate, the same in the driver and the kernel (one JVM in local mode). */
  static final Fate[] FATES = fates();

  /** Partitions whose first allocation already failed (OOM_ONCE). */
  static final Set<Long> FAILED_ONCE = ConcurrentHashMap.newKeySet();

  private static SparkSession spark;

  static Fate[] fates() {
    Random r = new Random(SEED);
    Fate[] f = new Fate[TASKS];
    for (int i = 0; i < TASKS; i++) {
      f[i] =
          r.nextInt(10) == 0 ? Fate.values()[1 + r.nextInt(Fate.values().length - 1)] : Fate.NORMAL;
    }
    return f;
  }

  @BeforeAll
  static void start() {
    // Four attempts per task: a failed or killed attempt runs again.
    spark =
        GpuSession.start(
            "gpu-soak",
            "local[8,4]",
            Map.of(
                "spark.overlap.staging.buffers",
                "4",
                "spark.overlap.batch.maxRows",
                "128",
                "spark.overlap.prefetch.maxBytes",
                "4m"));
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  /**
   * (p, x, s, attempt) to (p, x * 31 + 7, s), computed on the device. Its faults are driven by the
   * partition's fate on the task's first attempt.
   */
  static final class SoakKernel implements GpuKernel {
    private static final long serialVersionUID = 1L;

    @Override
    public String name() {
      return "soak";
    }

    @Override
    public StructType outputSchema(StructType input) {
      return new StructType()
          .add("p", DataTypes.LongType, false)
          .add("y", DataTypes.LongType, false)
          .add("s", DataTypes.StringType, true);
    }

    @Override
    public Table apply(Table input) {
      long p;
      int attempt;
      try (Scalar ps = input.getColumn(0).getScalarElement(0);
          Scalar as = input.getColumn(3).getScalarElement(0)) {
        p = ps.getLong();
        attempt = as.getInt();
      }
      Fate fate = FATES[(int) p];
      if (attempt == 0) {
        switch (fate) {
          case FAILS -> throw new IllegalStateException("injected failure in partition " + p);
          case KILLED -> sleepThroughInterrupts(300); // a slow kernel: the task is killed meanwhile
          case OOM_ONCE -> {
            if (FAILED_ONCE.add(p)) {
              tooMuch();
            }
          }
          case OOM_SPLIT -> {
            if (input.getRowCount() > 40) {
              tooMuch();
            }
          }
          case OOM_NEVER -> tooMuch();
          default -> {}
        }
      }
      try (Scalar k = Scalar.fromLong(31);
          Scalar c = Scalar.fromLong(7);
          ColumnVector t = input.getColumn(1).binaryOp(BinaryOp.MUL, k, DType.INT64);
          ColumnVector y = t.binaryOp(BinaryOp.ADD, c, DType.INT64)) {
        return new Table(input.getColumn(0), y, input.getColumn(2));
      }
    }

    /** A real allocation failure in RMM: more than the whole device. */
    private static void tooMuch() {
      DeviceMemoryBuffer.allocate(Cuda.memGetInfo().total + (1L << 30)).close();
    }
  }

  static void sleepThroughInterrupts(long millis) {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    while (System.nanoTime() < end) {
      try {
        TimeUnit.NANOSECONDS.sleep(end - System.nanoTime());
      } catch (InterruptedException e) {
        // a kernel on the device does not stop either
      }
    }
  }

  /** Kills each KILLED partition's first attempt shortly after it starts; records every end. */
  static final class Faults extends SparkListener {
    final ScheduledExecutorService killer = Executors.newSingleThreadScheduledExecutor();
    final Map<Long, Long> killedAt = new ConcurrentHashMap<>();
    final Map<Long, Long> killToEnd = new ConcurrentHashMap<>();
    final List<String> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
    final Map<Fate, Integer> ended = new ConcurrentHashMap<>();
    volatile boolean on;

    @Override
    public void onTaskStart(SparkListenerTaskStart start) {
      if (!on) {
        return;
      }
      long id = start.taskInfo().taskId();
      int index = start.taskInfo().index();
      if (FATES[index] == Fate.KILLED && start.taskInfo().attemptNumber() == 0) {
        killer.schedule(
            () -> {
              killedAt.put(id, System.currentTimeMillis());
              spark.sparkContext().killTaskAttempt(id, true, "soak: killed midway");
            },
            40,
            TimeUnit.MILLISECONDS);
      }
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (!on) {
        return;
      }
      Fate fate = FATES[end.taskInfo().index()];
      long id = end.taskInfo().taskId();
      if (end.reason() instanceof TaskKilled) {
        Long at = killedAt.get(id);
        killToEnd.put(id, at == null ? -1 : end.taskInfo().finishTime() - at);
        ended.merge(fate, 1, Integer::sum);
      } else if (end.reason() instanceof ExceptionFailure f) {
        failures.add(fate + " " + end.taskInfo().index() + ": " + f.toErrorString());
        ended.merge(fate, 1, Integer::sum);
      }
    }
  }

  @Test
  void aThousandTasksWithRealFaultsGiveExactRowsAndHoldNothing() throws Exception {
    GpuRuntime runtime = ExecutorState.runtime().orElseThrow();
    assertTrue(GpuStatus.current().gpu(), GpuStatus.current().reason());
    UserDefinedFunction attempt =
        functions
            .udf((UDF0<Integer>) () -> TaskContext.get().attemptNumber(), DataTypes.IntegerType)
            .asNondeterministic();
    // Partition p holds ids p * MAX_ROWS + [0, n_p), n_p between 1 and MAX_ROWS.
    Dataset<Row> input =
        spark
            .range(0, (long) TASKS * MAX_ROWS, 1, TASKS)
            .where(
                "id % " + MAX_ROWS + " < 1 + pmod(hash(id div " + MAX_ROWS + "), " + MAX_ROWS + ")")
            .selectExpr(
                "id div " + MAX_ROWS + " as p",
                "id * 7919 as x",
                "case when id % 7 = 0 then null else concat('v', id) end as s");
    List<Row> expected = sorted(input.selectExpr("p", "x * 31 + 7 as y", "s").collectAsList());
    Dataset<Row> withAttempt = input.withColumn("attempt", attempt.apply());

    // Warm up, then take the figures the soak must come back to.
    GpuPartitions.map(withAttempt.where("p < 0"), new SoakKernel()).count();
    long rmmStart = Rmm.getTotalBytesAllocated();
    PipelineMetrics metrics = runtime.pipeline().metrics();
    long retries0 = metrics.outOfMemoryRetries();
    long splits0 = metrics.outOfMemorySplits();

    Faults faults = new Faults();
    spark.sparkContext().addSparkListener(faults);
    List<Row> got;
    long t0 = System.nanoTime();
    try {
      faults.on = true;
      got = sorted(GpuPartitions.map(withAttempt, new SoakKernel()).collectAsList());
      spark.sparkContext().listenerBus().waitUntilEmpty();
    } finally {
      faults.on = false;
      faults.killer.shutdownNow();
      spark.sparkContext().removeSparkListener(faults);
    }
    long wallMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);

    assertEquals(expected.size(), got.size(), "rows");
    assertEquals(expected, got);

    int[] planned = new int[Fate.values().length];
    for (Fate f : FATES) {
      planned[f.ordinal()]++;
    }
    for (Fate f : Fate.values()) {
      assertTrue(f == Fate.NORMAL || planned[f.ordinal()] >= 10, "too few " + f);
    }
    // Exactly the planned attempts failed, each for the planned reason; nothing else failed.
    for (String f : faults.failures) {
      if (f.startsWith("FAILS")) {
        assertTrue(f.contains("injected failure in partition"), f);
      } else {
        assertTrue(f.startsWith("OOM_NEVER"), f);
        assertTrue(f.contains("out of device memory: kernel soak"), f);
        assertTrue(f.contains("which cannot be split further; device budget"), f);
      }
    }
    assertEquals(planned[Fate.FAILS.ordinal()], faults.ended.getOrDefault(Fate.FAILS, 0));
    assertEquals(planned[Fate.OOM_NEVER.ordinal()], faults.ended.getOrDefault(Fate.OOM_NEVER, 0));
    assertEquals(0, faults.ended.getOrDefault(Fate.OOM_ONCE, 0), faults.failures::toString);
    assertEquals(0, faults.ended.getOrDefault(Fate.OOM_SPLIT, 0), faults.failures::toString);
    assertEquals(0, faults.ended.getOrDefault(Fate.NORMAL, 0), faults.failures::toString);
    long killed = faults.ended.getOrDefault(Fate.KILLED, 0);
    assertTrue(killed >= planned[Fate.KILLED.ordinal()] / 2, "killed tasks: " + killed);
    long slowestKill =
        faults.killToEnd.values().stream().mapToLong(Long::longValue).max().orElse(0);
    assertTrue(slowestKill < KILL_BOUND_MILLIS, "a killed task ended " + slowestKill + " ms late");
    assertTrue(metrics.outOfMemoryRetries() > retries0, "no stage ran again");
    assertTrue(metrics.outOfMemorySplits() > splits0, "no batch was split");

    // The executor is the same one, still on its GPU, and holds nothing.
    assertTrue(
        ExecutorState.runtime().orElseThrow() == runtime, "the executor's GPU setup changed");
    assertTrue(GpuStatus.current().gpu(), GpuStatus.current().reason());
    assertFalse(runtime.health().fenced(), "fenced");
    assertEquals(0, runtime.pipeline().budget().inFlight(), "device bytes in flight");
    assertEquals(4, runtime.staging().available(), "staging buffers not given back");
    assertEquals(rmmStart, Rmm.getTotalBytesAllocated(), "device memory left allocated");
    // Every pinned result buffer is back in the pool: only the staging buffers, allocated
    // first, remain.
    try (var rest =
        PinnedMemoryPool.tryAllocate(PinnedMemoryPool.getTotalPoolSizeBytes() - (4L << 20))) {
      assertTrue(rest != null, "pinned host memory not given back");
    }
    System.out.printf(
        "gpu soak: %d tasks, fates %s; %d attempts failed, %d killed (slowest %d ms after its kill);"
            + " %d retries, %d splits after out of memory; %d ms; RMM %d bytes allocated%n",
        TASKS,
        Arrays.toString(planned),
        faults.failures.size(),
        killed,
        slowestKill,
        metrics.outOfMemoryRetries() - retries0,
        metrics.outOfMemorySplits() - splits0,
        wallMillis,
        Rmm.getTotalBytesAllocated());
  }

  private static List<Row> sorted(List<Row> rows) {
    List<Row> r = new ArrayList<>(rows);
    r.sort(
        (a, b) -> {
          int c = Long.compare(a.getLong(0), b.getLong(0));
          return c != 0 ? c : Long.compare(a.getLong(1), b.getLong(1));
        });
    return r;
  }
}
