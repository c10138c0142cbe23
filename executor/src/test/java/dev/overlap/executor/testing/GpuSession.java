package dev.overlap.executor.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.PinnedMemoryPool;
import ai.rapids.cudf.Rmm;
import dev.overlap.executor.config.ByteSize;
import dev.overlap.executor.resource.PinnedShare;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.sql.SparkSession;

/**
 * The GPU test classes' one set-up: a local session with the plugin, small staging buffers so that
 * inputs split into many batches, and the leak check after each test and at the end. Without a GPU
 * the class is skipped (the GPU suite, not CI, is what runs these).
 */
public final class GpuSession {
  private GpuSession() {}

  /**
   * A session on {@code master} with the plugin, staging buffers of 1 MiB (3 of them) and the
   * settings in {@code conf}, which may replace those; skipped without a GPU.
   */
  public static SparkSession start(String app, String master, Map<String, String> conf) {
    assumeTrue(Cuda.isEnvCompatibleForTesting(), "no GPU");
    Map<String, String> all = new LinkedHashMap<>();
    all.put("spark.plugins", "dev.overlap.executor.OverlapPlugin");
    all.put("spark.ui.enabled", "false");
    all.put("spark.overlap.staging.bufferSize", "1m");
    all.put("spark.overlap.staging.buffers", "3");
    all.putAll(conf);
    SparkSession.Builder b = SparkSession.builder().master(master).appName(app);
    all.forEach(b::config);
    return b.getOrCreate();
  }

  /**
   * Every task has ended: no batch holds device memory, every pinned result buffer is back in the
   * pool (only the staging buffers, allocated first, remain) and gave its bytes back to the share.
   */
  public static void assertNothingHeld(SparkSession spark) {
    // A failed job's other tasks may still be running when its action has thrown (a stage is
    // marked finished before its killed tasks end): wait until no task runs, then for what they
    // free as they end (a leak stays, so waiting cannot hide one).
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (System.nanoTime() < deadline
        && (runningTasks(spark) > 0
            || Rmm.getTotalBytesAllocated() != 0
            || PinnedShare.held() != 0)) {
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    assertEquals(0, runningTasks(spark), "tasks still running 30 s after the test");
    assertEquals(0, Rmm.getTotalBytesAllocated(), "device memory leaked");
    var conf = spark.sparkContext().getConf();
    long staging =
        ByteSize.parse(conf.get("spark.overlap.staging.bufferSize"))
            * conf.getInt("spark.overlap.staging.buffers", 3);
    try (var rest =
        PinnedMemoryPool.tryAllocate(PinnedMemoryPool.getTotalPoolSizeBytes() - staging)) {
      assertNotNull(rest, "pinned host memory leaked");
    }
    assertEquals(0, PinnedShare.held(), "pinned share not given back");
  }

  private static int runningTasks(SparkSession spark) {
    int n = 0;
    for (var e : spark.sparkContext().statusTracker().getExecutorInfos()) {
      n += e.numRunningTasks();
    }
    return n;
  }

  /** {@link #assertNothingHeld}, then the session stopped whatever the check found. */
  public static void stop(SparkSession spark) {
    if (spark == null) {
      return;
    }
    try {
      assertNothingHeld(spark);
    } finally {
      spark.stop();
    }
  }
}
