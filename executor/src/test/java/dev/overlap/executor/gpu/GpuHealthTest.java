package dev.overlap.executor.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.pipeline.PipelineTaskException;
import dev.overlap.executor.pipeline.StageStallException;
import dev.overlap.executor.resource.Closing;
import dev.overlap.executor.testing.CudaErrors;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Which errors fence the GPU, and what the fenced GPU says. */
class GpuHealthTest {
  private final GpuHealth health = new GpuHealth(2, "what follows");

  @Test
  void aFatalCudaErrorAsCauseFencesTheGpuNamingDeviceAndError() {
    health.ensureUsable();
    RuntimeException failure =
        new PipelineTaskException(
            "task 5: batch 0 failed in compute",
            CudaErrors.fatal("an illegal memory access was encountered"));
    assertTrue(health.check(failure));
    assertTrue(health.fenced());
    assertEquals(
        Optional.of(
            "GPU 2 failed: CudaFatalException: cudaErrorIllegalAddress: an illegal memory access"
                + " was encountered; fenced"),
        health.reason());
    GpuFencedException refused = assertThrows(GpuFencedException.class, health::ensureUsable);
    assertEquals(health.reason().orElseThrow() + ": what follows", refused.getMessage());
  }

  @Test
  void aFatalErrorSuppressedByAnotherFencesTheGpu() {
    IllegalStateException closing = new IllegalStateException("close failed");
    closing.addSuppressed(CudaErrors.fatal("unspecified launch failure"));
    assertTrue(GpuHealth.isFatal(new RuntimeException("stage failed", closing)));
  }

  @Test
  void aNonFatalCudaErrorFencesNothing() {
    assertFalse(
        health.check(new PipelineTaskException("oom", CudaErrors.nonFatal("out of memory"))));
    assertFalse(health.check(new IllegalStateException("kernel failed")));
    assertFalse(health.fenced());
    assertEquals(Optional.empty(), health.reason());
    health.ensureUsable();
  }

  @Test
  void aStallFencesTheGpuNamingTheStallAndTheFirstFencingIsTheOneReported() {
    StageStallException stall = new StageStallException("task 5: batch 3 stalled in compute");
    // The task's failure may reach the check before the watch tells the GPU of the stall.
    assertTrue(health.check(new PipelineTaskException(stall.getMessage(), stall)));
    health.stalled(stall);
    health.check(CudaErrors.fatal("an illegal memory access was encountered"));
    health.stalled(new StageStallException("task 6: batch 0 stalled in copy to device"));

    assertTrue(health.fenced());
    assertEquals(
        Optional.of(
            "GPU 2 failed: StageStallException: task 5: batch 3 stalled in compute; fenced"),
        health.reason());
    GpuFencedException refused = assertThrows(GpuFencedException.class, health::ensureUsable);
    assertEquals(health.reason().orElseThrow() + ": what follows", refused.getMessage());
  }

  @Test
  void theFirstFatalErrorIsTheOneReported() {
    health.check(CudaErrors.fatal("first"));
    health.check(CudaErrors.fatal("second"));
    assertTrue(health.reason().orElseThrow().contains("first"), health.reason().orElseThrow());
  }

  @Test
  void isFatalIsWhatAFailedUploadsCleanupIsGivenSoThatItFreesNothingIntoTheBrokenContext() {
    // What the upload stages pass to Closing.afterSync: a fatal copy leaves what it made alone.
    List<String> calls = new ArrayList<>();
    AutoCloseable made = () -> calls.add("close");
    Closing.afterSync(
        CudaErrors.fatal("an illegal memory access was encountered"),
        () -> calls.add("sync"),
        List.of(made),
        GpuHealth::isFatal);
    assertEquals(List.of(), calls);
    Closing.afterSync(
        CudaErrors.nonFatal("out of memory"),
        () -> calls.add("sync"),
        List.of(made),
        GpuHealth::isFatal);
    assertEquals(List.of("sync", "close"), calls);
  }
}
