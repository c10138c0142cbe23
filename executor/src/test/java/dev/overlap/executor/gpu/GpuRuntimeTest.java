package dev.overlap.executor.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.resource.PinnedShare;
import dev.overlap.executor.testing.Latches;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** What {@link GpuRuntime#start} undoes when a step fails, with the native steps faked: no GPU. */
class GpuRuntimeTest {
  private static final OverlapConf CONF =
      OverlapConf.fromMap(
          Map.of("spark.overlap.staging.bufferSize", "64k", "spark.overlap.staging.buffers", "2"));

  /**
   * Records every step and fails the one named {@code failAt}; the pipeline's threads' device
   * selection is not recorded, it runs {@link #onPipelineThread}.
   */
  static class FakeSteps implements NativeSteps {
    final List<String> calls = new ArrayList<>();
    final RuntimeException failure;
    final String failAt;
    final boolean rmmExists;
    final boolean pinnedExists;
    final List<HostMemoryBuffer> allocated = new ArrayList<>();
    private int buffers;

    FakeSteps(String failAt, boolean rmmExists, boolean pinnedExists) {
      this.failAt = failAt;
      this.failure = new IllegalStateException(failAt + " failed");
      this.rmmExists = rmmExists;
      this.pinnedExists = pinnedExists;
    }

    void step(String name) {
      calls.add(name);
      if (name.equals(failAt)) {
        throw failure;
      }
    }

    @Override
    public void setDevice(int device) {
      if (Thread.currentThread().getName().startsWith("overlap-")) {
        onPipelineThread();
        return;
      }
      step("setDevice " + device);
    }

    void onPipelineThread() {}

    @Override
    public boolean rmmInitialized() {
      return rmmExists;
    }

    @Override
    public long freeDeviceBytes() {
      return 8L << 30;
    }

    @Override
    public void initRmm(long poolBytes) {
      step("initRmm " + (poolBytes >> 30) + "g");
    }

    @Override
    public void shutdownRmm() {
      step("shutdownRmm");
    }

    @Override
    public boolean pinnedInitialized() {
      return pinnedExists;
    }

    @Override
    public void initPinned(long bytes) {
      step("initPinned");
    }

    @Override
    public void shutdownPinned() {
      step("shutdownPinned");
    }

    @Override
    public HostMemoryBuffer tryPinned(long bytes) {
      String name = "buffer" + buffers++;
      step("allocate " + name);
      HostMemoryBuffer b = HostMemoryBuffer.allocate(bytes, false);
      allocated.add(b);
      b.setEventHandler(refs -> calls.add("close " + name));
      return b;
    }

    @Override
    public HostMemoryBuffer pageable(long bytes) {
      throw new AssertionError("the fake pinned pool always has room");
    }

    @Override
    public StreamPair streams() {
      step("streams");
      throw new AssertionError("a fake cannot make CUDA streams: fail at this step at the latest");
    }

    @Override
    public void closeStreams(StreamPair streams) {
      step("close streams");
    }

    @Override
    public Thread startWarmup(int device) {
      step("warmup");
      throw new AssertionError("fail at the warm-up at the latest");
    }
  }

  /**
   * Gets past the streams (none: a fake cannot make them, and nothing uses them) to the pipeline
   * and the warm-up, which fails.
   */
  static class PastTheStreams extends FakeSteps {
    PastTheStreams() {
      super("warmup", false, false);
    }

    @Override
    public StreamPair streams() {
      step("streams");
      return null;
    }
  }

  private static final List<String> UP_TO_THE_WARMUP =
      List.of(
          "setDevice 3",
          "initRmm 4g",
          "initPinned",
          "allocate buffer0",
          "allocate buffer1",
          "streams",
          "warmup");

  @Test
  void aFailedWarmUpStopsThePipelineThenFreesTheRest() {
    PastTheStreams natives = new PastTheStreams();
    RuntimeException e =
        assertThrows(
            RuntimeException.class,
            () -> GpuRuntime.start(3, CONF, new GpuHealth(3, ""), natives, Duration.ofSeconds(30)));
    assertSame(natives.failure, e);
    assertEquals(0, e.getSuppressed().length, () -> List.of(e.getSuppressed()).toString());
    List<String> expected = new ArrayList<>(UP_TO_THE_WARMUP);
    expected.addAll(
        List.of(
            "close streams", "close buffer0", "close buffer1", "shutdownPinned", "shutdownRmm"));
    assertEquals(expected, natives.calls);
  }

  @Test
  void aPipelineThreadStillRunningAfterALaterStepFailedKeepsWhatItMayUseAllocated()
      throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    List<Thread> stuck = java.util.Collections.synchronizedList(new ArrayList<>());
    PastTheStreams natives =
        new PastTheStreams() {
          @Override
          void onPipelineThread() {
            if (Thread.currentThread().getName().equals("overlap-compute")) {
              // Selecting the device does not return (a GPU in trouble): the thread never ends.
              stuck.add(Thread.currentThread());
              Latches.awaitThroughInterrupts(release);
            }
          }
        };
    try {
      RuntimeException e =
          assertThrows(
              RuntimeException.class,
              () ->
                  GpuRuntime.start(3, CONF, new GpuHealth(3, ""), natives, Duration.ofMillis(200)));
      assertSame(natives.failure, e);
      assertEquals(0, e.getSuppressed().length, () -> List.of(e.getSuppressed()).toString());
      assertEquals(1, stuck.size());
      assertTrue(stuck.get(0).isAlive());
      // The streams, staging buffers and pools stay: the compute thread may be using them.
      assertEquals(UP_TO_THE_WARMUP, natives.calls);
    } finally {
      release.countDown();
      for (Thread t : stuck) {
        t.join(10_000);
      }
      // What the runtime left allocated, freed by the test (the fakes are plain host memory).
      PinnedShare.unlimited();
      natives.allocated.stream().filter(b -> b.getRefCount() > 0).forEach(HostMemoryBuffer::close);
    }
  }

  private static List<String> failingAt(String step, boolean rmmExists, boolean pinnedExists) {
    FakeSteps natives = new FakeSteps(step, rmmExists, pinnedExists);
    RuntimeException e =
        assertThrows(
            RuntimeException.class,
            () -> GpuRuntime.start(3, CONF, new GpuHealth(3, ""), natives, Duration.ofSeconds(30)));
    assertSame(natives.failure, e);
    assertEquals(0, e.getSuppressed().length, () -> List.of(e.getSuppressed()).toString());
    return natives.calls;
  }

  @Test
  void aFailedStagingAllocationShutsDownThePinnedPoolThenRmm() {
    assertEquals(
        List.of(
            "setDevice 3",
            "initRmm 4g",
            "initPinned",
            "allocate buffer0",
            "allocate buffer1",
            "close buffer0",
            "shutdownPinned",
            "shutdownRmm"),
        failingAt("allocate buffer1", false, false));
  }

  @Test
  void failedStreamsCloseTheStagingBuffersThenThePinnedPoolThenRmm() {
    assertEquals(
        List.of(
            "setDevice 3",
            "initRmm 4g",
            "initPinned",
            "allocate buffer0",
            "allocate buffer1",
            "streams",
            "close buffer0",
            "close buffer1",
            "shutdownPinned",
            "shutdownRmm"),
        failingAt("streams", false, false));
  }

  @Test
  void aFailedPinnedPoolShutsDownRmm() {
    assertEquals(
        List.of("setDevice 3", "initRmm 4g", "initPinned", "shutdownRmm"),
        failingAt("initPinned", false, false));
  }

  @Test
  void poolsThisRuntimeReusedAreLeftAlone() {
    assertEquals(
        List.of(
            "setDevice 3",
            "allocate buffer0",
            "allocate buffer1",
            "streams",
            "close buffer0",
            "close buffer1"),
        failingAt("streams", true, true));
  }

  /** Gets all the way: streams (none) and a warm-up that has ended. */
  static class Started extends PastTheStreams {
    @Override
    public Thread startWarmup(int device) {
      calls.add("warmup");
      return new Thread(() -> {}); // never started: not alive, joins at once
    }
  }

  private static final List<String> FREED =
      List.of("close streams", "close buffer0", "close buffer1", "shutdownPinned", "shutdownRmm");

  @Test
  void closeFreesNothingUntilTheTasksStillUsingTheRuntimeHaveEnded() throws Exception {
    Started natives = new Started();
    GpuRuntime runtime =
        GpuRuntime.start(3, CONF, new GpuHealth(3, ""), natives, Duration.ofSeconds(30));
    Runnable ended = runtime.tasks().enter();
    Thread closing = new Thread(runtime::close, "closing");
    closing.start();
    // Past the pipeline's close, the close's one timed wait is the one for the tasks.
    long deadline = System.nanoTime() + 10_000_000_000L;
    while ((!runtime.pipeline().threadsEnded() || closing.getState() != Thread.State.TIMED_WAITING)
        && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    // Spark stops its executor's plugins while a killed task may still copy out of a pinned
    // buffer: the close waits for it, and refuses new tasks meanwhile.
    assertEquals(Thread.State.TIMED_WAITING, closing.getState());
    Thread.sleep(100);
    assertTrue(closing.isAlive());
    assertEquals(UP_TO_THE_WARMUP, natives.calls);
    assertThrows(IllegalStateException.class, () -> runtime.tasks().enter());
    ended.run();
    ended.run(); // a second end counts nothing
    closing.join(10_000);
    assertFalse(closing.isAlive());
    List<String> expected = new ArrayList<>(UP_TO_THE_WARMUP);
    expected.addAll(FREED);
    assertEquals(expected, natives.calls);
    assertEquals(0, runtime.tasks().inFlight());
  }

  @Test
  void aTaskStillRunningAfterTheWaitKeepsWhatItMayUseAllocated() {
    Started natives = new Started();
    GpuRuntime runtime =
        GpuRuntime.start(3, CONF, new GpuHealth(3, ""), natives, Duration.ofMillis(200));
    runtime.tasks().enter(); // never ends
    try {
      long start = System.nanoTime();
      runtime.close();
      assertTrue(System.nanoTime() - start >= 200_000_000L, "the close waited for the task");
      // The streams, staging buffers and pools stay: the task's thread may be using them.
      assertEquals(UP_TO_THE_WARMUP, natives.calls);
      assertEquals(1, runtime.tasks().inFlight());
    } finally {
      PinnedShare.unlimited();
      natives.allocated.stream().filter(b -> b.getRefCount() > 0).forEach(HostMemoryBuffer::close);
    }
  }
}
