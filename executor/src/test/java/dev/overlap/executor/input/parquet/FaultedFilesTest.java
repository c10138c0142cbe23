package dev.overlap.executor.input.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.overlap.executor.gpu.FaultedFiles;
import dev.overlap.executor.plugin.OverlapDriverPlugin;
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
 * path written again is decoded again. The driver answers an executor's ask with its record, which
 * a retried task merges into its process's; a failed ask changes nothing.
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
    FaultedFiles.link(
        m -> {
          sent.add(m);
          return Boolean.TRUE;
        });
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

  private static final FaultedFiles.Fault FAULT =
      new FaultedFiles.Fault(
          "file:/data/part-00003.parquet#4096#17",
          "part-00003.parquet: the GPU failed fatally while decoding it (cudaErrorIllegalAddress);"
              + " it is read on the host from now on");

  @Test
  void theDriverRecordsAFaultAndAnswersAnAskWithItsRecord() throws Exception {
    OverlapDriverPlugin driver = new OverlapDriverPlugin();
    assertEquals(Map.of(), driver.receive(new FaultedFiles.RecordAsked()));
    assertEquals(Boolean.TRUE, driver.receive(FAULT));
    Object answer = driver.receive(new FaultedFiles.RecordAsked());
    assertEquals(Map.of(FAULT.file(), FAULT.reason()), answer);
    // The answer goes back over Spark's RPC: it must serialize.
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    try (java.io.ObjectOutputStream out = new java.io.ObjectOutputStream(bytes)) {
      out.writeObject(answer);
    }
    try (java.io.ObjectInputStream in =
        new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(bytes.toByteArray()))) {
      assertEquals(answer, in.readObject());
    }
    assertNull(driver.receive("someone else's message"));
  }

  @Test
  void aRetryLearnsOfAFaultOnlyTheDriverHeardOf() {
    FaultedFiles.received(FAULT);
    Object record = FaultedFiles.answer(new FaultedFiles.RecordAsked());
    FaultedFiles.clear(); // another executor: it never saw the fault, its scan predates it
    List<Object> asked = new ArrayList<>();
    FaultedFiles.link(
        m -> {
          asked.add(m);
          return record;
        });
    assertNull(FaultedFiles.why(FAULT.file(), Map.of()));

    assertEquals(1, FaultedFiles.askDriver());
    assertEquals(List.of(new FaultedFiles.RecordAsked()), asked);
    // Merged into the process's record: every later plan here reads the file on the host.
    assertEquals(FAULT.reason(), FaultedFiles.why(FAULT.file(), Map.of()));
    assertEquals(0, FaultedFiles.askDriver());
  }

  @Test
  void aFailedAskChangesNothingAndThrowsNothing() {
    FaultedFiles.link(
        m -> {
          throw new IllegalStateException("asking the driver failed: RpcTimeoutException");
        });
    assertEquals(0, FaultedFiles.askDriver());
    assertNull(FaultedFiles.why(FAULT.file(), Map.of()));
    // A fault still records locally when the driver cannot be told.
    FaultedFiles.faulted(FAULT.file(), "part-00003.parquet", "cudaErrorIllegalAddress");
    assertEquals(FAULT.reason(), FaultedFiles.why(FAULT.file(), Map.of()));
  }
}
