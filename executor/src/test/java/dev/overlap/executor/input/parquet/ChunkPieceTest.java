package dev.overlap.executor.input.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** What a Parquet batch says it reads, in a stalled stage's line. */
class ChunkPieceTest {
  /** A piece of {@code file}: nothing but its name is read. */
  private static ChunkPiece of(String file) {
    return new ChunkPiece(
        null,
        null,
        null,
        null,
        null,
        null,
        0,
        null,
        new FileSplit(file, 0, 1, 1, 0),
        null,
        null,
        null);
  }

  private static List<ChunkPiece> pieces(String... files) {
    return Stream.of(files).map(ChunkPieceTest::of).toList();
  }

  @Test
  void aBatchNamesEachOfItsFilesOnceInOrderAndCountsThosePastTwo() {
    assertEquals("", ChunkPiece.files(List.of()));
    assertEquals("file s3://b/t/a.parquet", ChunkPiece.files(pieces("s3://b/t/a.parquet")));
    assertEquals("files a, b", ChunkPiece.files(pieces("a", "b", "a")));
    assertEquals("files c, a and 2 more", ChunkPiece.files(pieces("c", "a", "c", "d", "b")));
  }
}
