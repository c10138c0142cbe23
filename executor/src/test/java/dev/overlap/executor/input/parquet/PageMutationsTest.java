package dev.overlap.executor.input.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.testing.PageMutations;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The fuzzer's damage: one page changed, the file's length and footer kept. */
class PageMutationsTest {
  @TempDir Path dir;

  @Test
  void eachSeedChangesAPageAndKeepsTheFooter() throws Exception {
    Path valid =
        FilePlanTest.write(dir.resolve("v.parquet"), CompressionCodecName.UNCOMPRESSED, 3_000);
    byte[] before = Files.readAllBytes(valid);
    int changed = 0;
    for (long seed = 1; seed <= 40; seed++) {
      Path f = dir.resolve("d" + seed + ".parquet");
      Files.copy(valid, f);
      String what = PageMutations.damage(f, new Random(seed));
      byte[] after = Files.readAllBytes(f);
      assertEquals(before.length, after.length, what);
      if (!Arrays.equals(before, after)) {
        changed++;
      } else {
        assertTrue(what.contains("nothing"), what);
      }
      try (ParquetFileReader r =
          ParquetFileReader.open(
              HadoopInputFile.fromPath(
                  new org.apache.hadoop.fs.Path(f.toUri()),
                  new org.apache.hadoop.conf.Configuration()))) {
        assertEquals(3_000, r.getRecordCount(), what);
      }
    }
    assertTrue(changed >= 30, "seeds that changed the file: " + changed);
  }
}
