package dev.overlap.executor.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.config.OverlapConf;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What {@link GpuRuntime#start} undoes when a step fails, with the native steps faked: no GPU. */
class GpuRuntimeTest {
  private static final OverlapConf CONF =
      OverlapConf.fromMap(
          Map.of("spark.overlap.staging.bufferSize", "64k", "spark.overlap.staging.buffers", "2"));

  /** Records every step and fails the one named {@code failAt}. */
  static final class FakeSteps implements NativeSteps {
    final List<String> calls = new ArrayList<>();
    final RuntimeException failure;
    final String failAt;
    final boolean rmmExists;
    final boolean pinnedExists;
    private int buffers;

    FakeSteps(String failAt, boolean rmmExists, boolean pinnedExists) {
      this.failAt = failAt;
      this.failure = new IllegalStateException(failAt + " failed");
      this.rmmExists = rmmExists;
      this.pinnedExists = pinnedExists;
    }

    private void step(String name) {
      calls.add(name);
      if (name.equals(failAt)) {
        throw failure;
      }
    }

    @Override
    public void setDevice(int device) {
      step("setDevice " + device);
    }

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
  }

  private static List<String> failingAt(String step, boolean rmmExists, boolean pinnedExists) {
    FakeSteps natives = new FakeSteps(step, rmmExists, pinnedExists);
    RuntimeException e =
        assertThrows(
            RuntimeException.class, () -> GpuRuntime.start(3, CONF, new GpuHealth(3, ""), natives));
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
}
