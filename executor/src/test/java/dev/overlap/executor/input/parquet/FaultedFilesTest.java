package dev.overlap.executor.input.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.overlap.executor.gpu.FaultedFiles;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The record of files whose decode failed fatally on a GPU: a recorded file is read on the host by
 * every later plan of this process and of any scan planned after the driver heard of it; the same
 * path written again is decoded again.
 */
class FaultedFilesTest {
  @TempDir java.nio.file.Path dir;

  @AfterEach
  void forget() {
    FaultedFiles.clear();
    FaultedFiles.link(null);
  }

  @Test
  void aFaultIsSentToTheDriverAndReadOnTheHostFromThenOn() throws Exception {
    java.nio.file.Path file =
        FilePlanTest.write(
            dir.resolve("f.parquet"),
            org.apache.parquet.hadoop.metadata.CompressionCodecName.SNAPPY,
            50);
    FileSplit split = FilePlanTest.split(file, 0, Files.size(file));
    List<Object> sent = new ArrayList<>();
    FaultedFiles.link(sent::add);
    assertNull(FaultedFiles.why(split.identity(), Map.of()));

    FaultedFiles.faulted(
        split.identity(), split.fileName(), "cudaErrorIllegalAddress: an illegal memory access");
    String reason =
        "f.parquet: the GPU failed fatally while decoding it (cudaErrorIllegalAddress: an illegal"
            + " memory access); it is read on the host from now on";
    assertEquals(List.of(new FaultedFiles.Fault(split.identity(), reason)), sent);
    assertEquals(reason, FaultedFiles.why(split.identity(), Map.of()));
    // The error is sticky: the decodes beside the first fault fail too, and name no file.
    FileSplit beside =
        FilePlanTest.split(
            FilePlanTest.write(
                dir.resolve("h.parquet"),
                org.apache.parquet.hadoop.metadata.CompressionCodecName.SNAPPY,
                20),
            0,
            10);
    FaultedFiles.faulted(beside.identity(), beside.fileName(), "cudaErrorIllegalAddress");
    assertNull(FaultedFiles.why(beside.identity(), Map.of()));
    assertEquals(1, sent.size());
    // Another split of the same file is the same file.
    assertEquals(reason, FaultedFiles.why(FilePlanTest.split(file, 4, 10).identity(), Map.of()));

    // A process that only heard of it from the driver, through a scan planned afterwards.
    Map<String, String> planned = FaultedFiles.snapshot();
    FaultedFiles.clear();
    assertNull(FaultedFiles.why(split.identity(), Map.of()));
    assertEquals(reason, FaultedFiles.why(split.identity(), planned));
    FaultedFiles.received((FaultedFiles.Fault) sent.get(0));
    assertEquals(reason, FaultedFiles.why(split.identity(), Map.of()));

    // Written again: another size and time, decoded again.
    FilePlanTest.write(
        file.resolveSibling("g.parquet"),
        org.apache.parquet.hadoop.metadata.CompressionCodecName.SNAPPY,
        80);
    Files.move(
        file.resolveSibling("g.parquet"), file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    assertNull(FaultedFiles.why(FilePlanTest.split(file, 0, Files.size(file)).identity(), planned));
  }
}
