package dev.overlap.executor.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.pipeline.BatchStages;
import dev.overlap.executor.testing.CudaErrors;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Stages behind a {@link GpuHealth}, with named values standing in for the device's. */
class FencedStagesTest {
  private final GpuHealth health = new GpuHealth(1, "what follows");
  private final List<String> calls = new ArrayList<>();

  /** Records its close. */
  final class Value implements AutoCloseable {
    final String name;

    Value(String name) {
      this.name = name;
    }

    @Override
    public void close() {
      calls.add("close " + name);
    }
  }

  /** Records each stage; compute throws {@code computeFails} when it is not null. */
  final class Recording implements BatchStages<Value, Value, Value, Value> {
    RuntimeException computeFails;

    @Override
    public Value upload(Value host) {
      calls.add("upload");
      return new Value("device");
    }

    @Override
    public Value compute(Value device) {
      calls.add("compute");
      if (computeFails != null) {
        throw computeFails;
      }
      return new Value("output");
    }

    @Override
    public Value download(Value output) {
      calls.add("download");
      return new Value("result");
    }

    @Override
    public String outOfMemory(dev.overlap.executor.api.PipelineStage stage, Throwable failure) {
      return "kernel asked for 8 bytes in " + stage;
    }

    @Override
    public List<Value> splitHost(Value host) {
      return List.of(new Value(host.name + "/1"), new Value(host.name + "/2"));
    }

    @Override
    public List<Value> splitDevice(Value device) {
      return List.of(new Value(device.name + "/1"), new Value(device.name + "/2"));
    }

    @Override
    public long outputBytes(Value output) {
      return 42;
    }

    @Override
    public long freeDeviceBytes() {
      return 7;
    }
  }

  /**
   * The pipeline's out-of-memory handling reaches the wrapped stages: without it a device
   * allocation that failed is an ordinary failure (no retry, no split) and a kernel's output is not
   * counted in the budget.
   */
  @Test
  void outOfMemoryHandlingAndAccountingReachTheWrappedStages() throws Exception {
    FencedStages<Value, Value, Value, Value> s = FencedStages.of(new Recording(), health);
    RuntimeException oom = new RuntimeException("out_of_memory");
    assertEquals(
        "kernel asked for 8 bytes in COMPUTE",
        s.outOfMemory(dev.overlap.executor.api.PipelineStage.COMPUTE, oom));
    assertEquals(2, s.splitHost(new Value("host")).size());
    try (FencedStages.OnDevice<Value> device = s.upload(new Value("host"))) {
      List<FencedStages.OnDevice<Value>> parts = s.splitDevice(device);
      assertEquals(2, parts.size());
      for (FencedStages.OnDevice<Value> p : parts) {
        p.close();
      }
      assertTrue(
          calls.contains("close device/1") && calls.contains("close device/2"), calls.toString());
      try (FencedStages.OnDevice<Value> out = s.compute(device)) {
        assertEquals(42, s.outputBytes(out));
      }
    }
    assertEquals(7, s.freeDeviceBytes());
  }

  @Test
  void aFatalErrorFencesAndWhatIsOnTheDeviceIsNoLongerFreed() throws Exception {
    Recording inner = new Recording();
    FencedStages<Value, Value, Value, Value> stages = FencedStages.of(inner, health);
    FencedStages.OnDevice<Value> device = stages.upload(new Value("host"));
    inner.computeFails = CudaErrors.fatal("an illegal memory access was encountered");

    assertSame(
        inner.computeFails, assertThrows(RuntimeException.class, () -> stages.compute(device)));
    device.close(); // as the pipeline closes a stage's input

    assertTrue(health.fenced());
    assertEquals(List.of("upload", "compute"), calls);
  }

  @Test
  void aFencedGpuRunsNoStage() {
    FencedStages<Value, Value, Value, Value> stages = FencedStages.of(new Recording(), health);
    health.check(CudaErrors.fatal("unspecified launch failure"));

    GpuFencedException e =
        assertThrows(GpuFencedException.class, () -> stages.upload(new Value("host")));
    assertEquals(health.message(), e.getMessage());
    assertEquals(List.of(), calls);
  }

  @Test
  void whileTheGpuWorksStagesRunAndValuesAreFreed() throws Exception {
    Recording inner = new Recording();
    FencedStages<Value, Value, Value, Value> stages = FencedStages.of(inner, health);
    FencedStages.OnDevice<Value> device = stages.upload(new Value("host"));
    FencedStages.OnDevice<Value> output = stages.compute(device);
    device.close();
    stages.download(output).close();
    output.close();
    inner.computeFails = CudaErrors.nonFatal("out of memory");
    FencedStages.OnDevice<Value> again = stages.upload(new Value("host"));
    assertThrows(RuntimeException.class, () -> stages.compute(again));
    again.close();

    assertFalse(health.fenced());
    assertEquals(
        List.of(
            "upload",
            "compute",
            "close device",
            "download",
            "close result",
            "close output",
            "upload",
            "compute",
            "close device"),
        calls);
  }
}
