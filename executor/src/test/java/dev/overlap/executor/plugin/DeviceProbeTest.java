package dev.overlap.executor.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the executor looks for a GPU when Spark assigned none. */
class DeviceProbeTest {
  @TempDir Path tmp;

  @Test
  void withoutAnyOfTheDriversFilesCudaIsNotAskedAndTheLineSaysWhy() {
    List<Path> signs = List.of(tmp.resolve("proc-driver-nvidia-version"), tmp.resolve("nvidiactl"));
    GpuStart.DeviceChoice c = GpuStart.probeDevice(signs);
    assertEquals(Optional.empty(), c.device());
    // CUDA's own answer names the driver's version or the device count, never these files: a
    // probe that went on to CUDA (and even found a GPU) fails here.
    assertEquals(
        "no CUDA device is visible (no NVIDIA driver: none of "
            + signs.get(0)
            + ", "
            + signs.get(1)
            + " exists)",
        c.problem());
  }

  @Test
  void oneOfTheDriversFilesIsEnoughToAskCuda() throws Exception {
    Path sign = Files.writeString(tmp.resolve("nvidiactl"), "");
    GpuStart.DeviceChoice c = GpuStart.probeDevice(List.of(tmp.resolve("absent"), sign));
    // CUDA answered: a device here, or its own reason on a machine without one.
    if (c.device().isEmpty()) {
      assertTrue(c.problem().startsWith("no CUDA device is visible ("), c.problem());
      assertFalse(c.problem().contains("none of"), c.problem());
    } else {
      assertEquals(Optional.of(0), c.device());
    }
  }

  @Test
  void theDriversFilesAreTheModulesTheControlDeviceAndWsls() {
    assertEquals(
        List.of(
            Path.of("/proc/driver/nvidia/version"), Path.of("/dev/nvidiactl"), Path.of("/dev/dxg")),
        GpuStart.DRIVER_SIGNS);
  }
}
