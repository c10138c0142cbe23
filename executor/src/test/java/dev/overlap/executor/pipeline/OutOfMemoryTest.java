package dev.overlap.executor.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.PipelineStage;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A device allocation that fails in upload or compute is backpressure: drain, retry, split. */
class OutOfMemoryTest {
  private static final long BUDGET = 1000;

  /** Rows in flight, counted open until closed; closing twice is a bug. */
  static final class Rows implements AutoCloseable {
    static final AtomicInteger OPEN = new AtomicInteger();
    final int[] values;
    private boolean closed;

    Rows(int[] values) {
      this.values = values;
      OPEN.incrementAndGet();
    }

    static Rows range(int from, int to) {
      return new Rows(IntStream.range(from, to).toArray());
    }

    int rows() {
      return values.length;
    }

    @Override
    public synchronized void close() {
      if (closed) {
        throw new IllegalStateException("closed twice");
      }
      closed = true;
      OPEN.decrementAndGet();
    }
  }

  /** As a failed RMM allocation looks to the stages. */
  static final class FakeOom extends RuntimeException {
    final long bytes;

    FakeOom(long bytes) {
      super("could not allocate " + bytes + " bytes");
      this.bytes = bytes;
    }
  }

  /**
   * Stages over a device that holds at most {@code uploadRows} rows of a batch at upload and whose
   * kernel fits at most {@code computeRows}; the first compute of the batch that starts with value
   * {@code failOnceAt} fails whatever its size. Compute adds 1000 to each value. Rows can be split
   * down to one.
   */
  static class Device implements BatchStages<Rows, Rows, Rows, Rows> {
    final List<String> events = Collections.synchronizedList(new ArrayList<>());
    volatile int uploadRows = Integer.MAX_VALUE;
    volatile int computeRows = Integer.MAX_VALUE;
    volatile int failOnceAt = -1;
    volatile long outputBytes;

    /** Counted down when the compute of the batch that starts with {@code failOnceAt} fails. */
    final CountDownLatch failedOnce = new CountDownLatch(1);

    void beforeDownload(Rows in) throws Exception {}

    @Override
    public Rows upload(Rows h) {
      if (h.rows() > uploadRows) {
        events.add("upload oom " + h.values[0] + "+" + h.rows());
        throw new FakeOom(8L * h.rows());
      }
      events.add("upload " + h.values[0] + "+" + h.rows());
      return new Rows(h.values.clone());
    }

    @Override
    public Rows compute(Rows d) {
      boolean once = d.values[0] == failOnceAt;
      if (once) {
        failOnceAt = -1;
      }
      if (d.rows() > computeRows || once) {
        events.add("compute oom " + d.values[0] + "+" + d.rows());
        if (once) {
          failedOnce.countDown();
        }
        throw new FakeOom(80L * d.rows());
      }
      events.add("compute " + d.values[0] + "+" + d.rows());
      return new Rows(IntStream.of(d.values).map(v -> v + 1000).toArray());
    }

    @Override
    public Rows download(Rows o) throws Exception {
      beforeDownload(o);
      events.add("download " + (o.values[0] - 1000) + "+" + o.rows());
      return new Rows(o.values.clone());
    }

    @Override
    public String outOfMemory(PipelineStage stage, Throwable t) {
      return t instanceof FakeOom f
          ? "kernel fake asked for " + f.bytes + " bytes in " + stage.label()
          : null;
    }

    @Override
    public List<Rows> splitHost(Rows h) {
      return halves(h);
    }

    @Override
    public List<Rows> splitDevice(Rows d) {
      return halves(d);
    }

    private static List<Rows> halves(Rows r) {
      if (r.rows() < 2) {
        return List.of();
      }
      int half = r.rows() / 2;
      int[] v = r.values;
      return List.of(
          new Rows(java.util.Arrays.copyOfRange(v, 0, half)),
          new Rows(java.util.Arrays.copyOfRange(v, half, v.length)));
    }

    @Override
    public long outputBytes(Rows output) {
      return outputBytes;
    }

    @Override
    public long freeDeviceBytes() {
      return 123;
    }
  }

  private StagePipeline pipeline;

  @AfterEach
  void stop() {
    if (pipeline != null) {
      pipeline.close();
    }
    assertEquals(0, Rows.OPEN.get(), "rows left open");
    Rows.OPEN.set(0);
  }

  /** Submits {@code batches} batches of {@code rows} rows and takes every result's values. */
  private static List<Integer> run(TaskLane<Rows, Rows> lane, int batches, int rows)
      throws InterruptedException {
    List<Integer> out = new ArrayList<>();
    try (lane) {
      for (int b = 0; b < batches; b++) {
        lane.submit(Rows.range(b * rows, (b + 1) * rows), 10L * rows);
      }
      while (lane.pending() > 0) {
        try (Rows r = lane.next()) {
          IntStream.of(r.values).forEach(out::add);
        }
      }
    }
    return out;
  }

  private static List<Integer> expected(int rows) {
    return IntStream.range(0, rows).map(v -> v + 1000).boxed().toList();
  }

  @Test
  void anAllocationThatFailsOnceSucceedsOnceTheBatchesAheadAreDone() throws Exception {
    pipeline = new StagePipeline(new DeviceBudget(BUDGET), "t", null);
    Device device =
        new Device() {
          @Override
          void beforeDownload(Rows in) throws Exception {
            if (in.values[0] == 1000) {
              // Batch 0 holds its memory until batch 1's compute has failed for want of it.
              assertTrue(failedOnce.await(10, TimeUnit.SECONDS));
            }
          }
        };
    device.failOnceAt = 4;
    assertEquals(expected(8), run(pipeline.openLane("a", device, 3), 2, 4));
    List<String> e = device.events;
    int oom = e.indexOf("compute oom 4+4");
    assertTrue(oom >= 0, e.toString());
    assertTrue(e.indexOf("download 0+4") > oom, "batch 0 was done before batch 1 failed: " + e);
    assertTrue(e.indexOf("compute 4+4") > e.indexOf("download 0+4"), "retried before the drain");
    assertEquals(1, pipeline.metrics().outOfMemoryRetries());
    assertEquals(0, pipeline.metrics().outOfMemorySplits());
    assertEquals(0, pipeline.budget().inFlight());
  }

  @Test
  void withSeveralComputeThreadsARetryWaitsOnlyForTheDownloadsAheadOfIt() throws Exception {
    pipeline =
        new StagePipeline(
            new DeviceBudget(BUDGET),
            new StagePipeline.Threads(
                "t", null, 2, 1, StagePipeline.CLOSE_LOG_EVERY, StagePipeline.CLOSE_GIVE_UP));
    CountDownLatch streaming = new CountDownLatch(5);
    Device device =
        new Device() {
          @Override
          void beforeDownload(Rows in) throws Exception {
            if (in.values[0] < 100_000) {
              // Task b's downloads are slow, and its other compute thread keeps them coming.
              Thread.sleep(5);
              streaming.countDown();
            }
          }
        };
    device.failOnceAt = 100_000;
    TaskLane<Rows, Rows> b = pipeline.openLane("b", device, 3);
    TaskLane<Rows, Rows> a = pipeline.openLane("a", device, 3);
    java.util.concurrent.ExecutorService tasks =
        java.util.concurrent.Executors.newFixedThreadPool(1);
    try {
      java.util.concurrent.Future<List<Integer>> fb = tasks.submit(() -> run(b, 200, 4));
      assertTrue(streaming.await(10, TimeUnit.SECONDS));
      List<Integer> got = new ArrayList<>();
      try (a) {
        a.submit(Rows.range(100_000, 100_004), 40);
        try (Rows r = a.next()) {
          IntStream.of(r.values).forEach(got::add);
        }
      }
      assertEquals(List.of(101_000, 101_001, 101_002, 101_003), got);
      List<String> e = List.copyOf(device.events);
      assertTrue(e.contains("compute oom 100000+4"), e.toString());
      // a's batch came back while b still had most of its batches to go.
      long bDone =
          e.stream()
              .filter(x -> x.startsWith("download ") && !x.startsWith("download 100000"))
              .count();
      assertTrue(bDone < 150, "a waited for " + bDone + " of b's 200 downloads");
      assertEquals(expected(800), fb.get(30, TimeUnit.SECONDS));
    } finally {
      tasks.shutdownNow();
    }
    assertEquals(1, pipeline.metrics().outOfMemoryRetries());
    assertEquals(0, pipeline.budget().inFlight());
  }

  @Test
  void aKernelThatFitsOnlyAQuarterOfABatchGivesEveryRowInOrder() throws Exception {
    pipeline = new StagePipeline(new DeviceBudget(BUDGET), "t", null);
    Device device = new Device();
    device.computeRows = 3; // 8-row batches: halves of 4 fail too, quarters of 2 fit
    List<Integer> out = run(pipeline.openLane("a", device, 2), 3, 8);
    assertEquals(expected(24), out);
    // Each batch: the first try, the retry, 2 halves (each tried and retried) cut in 4 quarters.
    assertEquals(9, pipeline.metrics().outOfMemorySplits());
    assertEquals(0, pipeline.budget().inFlight());
    assertEquals(3 * 4, pipeline.metrics().snapshot().batches(), "each quarter completes");
  }

  @Test
  void anUploadThatDoesNotFitIsCutOnTheHost() throws Exception {
    pipeline = new StagePipeline(new DeviceBudget(BUDGET), "t", null);
    Device device = new Device();
    device.uploadRows = 5;
    TaskLane<Rows, Rows> lane = pipeline.openLane("a", device, 2);
    List<Integer> sizes = new ArrayList<>();
    List<Integer> out = new ArrayList<>();
    try (lane) {
      lane.submit(Rows.range(0, 10), 100);
      lane.submit(Rows.range(10, 13), 30);
      while (lane.pending() > 0) {
        try (Rows r = lane.next()) {
          sizes.add(r.rows());
          IntStream.of(r.values).forEach(out::add);
        }
      }
    }
    assertEquals(expected(13), out);
    assertEquals(List.of(5, 5, 3), sizes, "one result per part, in order");
    assertEquals(0, pipeline.budget().inFlight());
  }

  @Test
  void aBatchThatCannotBeSplitFailsItsTaskWithOneLine() throws Exception {
    pipeline = new StagePipeline(new DeviceBudget(BUDGET), "t", null);
    Device device = new Device();
    device.computeRows = 0; // not even one row fits
    TaskLane<Rows, Rows> lane = pipeline.openLane("task 7", device, 2);
    lane.submit(Rows.range(0, 2), 20);
    PipelineTaskException e = assertThrows(PipelineTaskException.class, lane::next);
    lane.close();
    OutOfDeviceMemoryException oom =
        assertInstanceOf(OutOfDeviceMemoryException.class, e.getCause());
    assertEquals(null, oom.getCause(), "nothing Spark could take for a fatal error");
    assertInstanceOf(FakeOom.class, oom.getSuppressed()[0], "the last failed allocation");
    String line = oom.getMessage();
    assertEquals(
        "out of device memory: kernel fake asked for 80 bytes in compute, for batch 0 part 1 of"
            + " task 7, which cannot be split further; device budget 1000 bytes (20 in flight);"
            + " device free 123 bytes",
        line);
    assertEquals("task 7: batch 0 part 1 failed in compute: " + line, e.getMessage());
    assertFalse(e.getMessage().contains("\n"));
    assertTrue(lane.awaitLeft(10_000));
    assertEquals(0, pipeline.budget().inFlight());
  }

  @Test
  void otherFailuresStillFailAtOnce() throws Exception {
    pipeline = new StagePipeline(new DeviceBudget(BUDGET), "t", null);
    IllegalStateException boom = new IllegalStateException("kernel bug");
    Device device =
        new Device() {
          @Override
          public Rows compute(Rows d) {
            throw boom;
          }
        };
    TaskLane<Rows, Rows> lane = pipeline.openLane("a", device, 2);
    lane.submit(Rows.range(0, 4), 40);
    PipelineTaskException e = assertThrows(PipelineTaskException.class, lane::next);
    assertSame(boom, e.getCause());
    lane.close();
    assertEquals(0, pipeline.metrics().outOfMemoryRetries());
    assertTrue(lane.awaitLeft(10_000));
  }

  @Test
  void aKernelsOutputCountsInTheBudgetUntilItIsDownloaded() throws Exception {
    DeviceBudget budget = new DeviceBudget(BUDGET);
    pipeline = new StagePipeline(budget, "t", null);
    CountDownLatch downloading = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Device device =
        new Device() {
          @Override
          void beforeDownload(Rows in) throws Exception {
            downloading.countDown();
            release.await();
          }
        };
    device.outputBytes = 700;
    TaskLane<Rows, Rows> lane = pipeline.openLane("a", device, 2);
    lane.submit(Rows.range(0, 4), 40);
    assertTrue(downloading.await(10, TimeUnit.SECONDS));
    assertEquals(740, budget.inFlight(), "input and output both on the device");
    release.countDown();
    lane.next().close();
    lane.close();
    assertEquals(0, budget.inFlight());
    assertEquals(740, budget.peak());
  }

  @Test
  void aTaskKilledWhileItsBatchWaitsForTheDrainLeavesNothing() throws Exception {
    pipeline = new StagePipeline(new DeviceBudget(BUDGET), "t", null);
    CountDownLatch release = new CountDownLatch(1);
    Device device =
        new Device() {
          @Override
          void beforeDownload(Rows in) throws Exception {
            release.await(); // batch 0 never finishes downloading until the end
          }
        };
    TaskLane<Rows, Rows> lane = pipeline.openLane("a", device, 2);
    device.failOnceAt = 4;
    lane.submit(Rows.range(0, 4), 40);
    lane.submit(Rows.range(4, 8), 40);
    assertTrue(device.failedOnce.await(10, TimeUnit.SECONDS), device.events.toString());
    assertTrue(device.events.contains("compute oom 4+4"), device.events.toString());
    lane.close(); // the task is killed while batch 1 waits for batch 0
    release.countDown();
    assertTrue(lane.awaitLeft(10_000));
    assertEquals(0, pipeline.budget().inFlight());
    assertFalse(device.events.contains("compute 4+4"), "ran after its task ended");
  }
}
