package dev.overlap.executor.task;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.input.parquet.NotForGpu;
import dev.overlap.executor.testing.LocalSession;
import dev.overlap.executor.testing.MistypedFooter;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * cuDF's own footer parser on a footer it refuses: the check turns cuDF's exception into the reason
 * the partition goes to the host, and passes the footer Spark wrote.
 */
@Tag("gpu")
class FooterCheckGpuTest {

  /** The footer bytes ({@code FileMetaData}) of a Parquet file. */
  private static byte[] footer(Path file) throws Exception {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
      byte[] tail = new byte[8];
      f.seek(f.length() - 8);
      f.readFully(tail);
      int n = ByteBuffer.wrap(tail, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
      byte[] out = new byte[n];
      f.seek(f.length() - 8 - n);
      f.readFully(out);
      return out;
    }
  }

  @Test
  void aFooterCudfRefusesIsAReasonForTheHostNamingTheFileAndCudfsWords() throws Exception {
    Path dir = Files.createTempDirectory("overlap-footer").resolve("t");
    SparkSession spark = LocalSession.start("local[1]", "footer-check");
    Path file;
    try {
      spark
          .range(0, 100)
          .selectExpr("id", "cast(id as int) as n")
          .coalesce(1)
          .write()
          .parquet(dir.toString());
      try (Stream<Path> s = Files.list(dir)) {
        file = s.filter(p -> p.toString().endsWith(".parquet")).findFirst().orElseThrow();
      }
    } finally {
      spark.stop();
    }
    byte[] good = footer(file);
    String[] cols = {"id", "n"};
    assertDoesNotThrow(() -> ParquetPlanOrHost.cudfReadsFooter("a.parquet", good, cols));
    NotForGpu e =
        assertThrows(
            NotForGpu.class,
            () -> ParquetPlanOrHost.cudfReadsFooter("a.parquet", MistypedFooter.of(good), cols));
    assertTrue(
        e.reason()
            .startsWith(
                "a.parquet: cuDF's Parquet reader cannot parse its footer, which Spark's reads ("),
        e.reason());
    assertTrue(e.reason().contains("expected int32 field, got list field"), e.reason());
  }
}
